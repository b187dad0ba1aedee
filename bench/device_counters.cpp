#include "bench/device_counters.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cstdint>
#include <vector>

namespace gfsl::bench {

namespace {

// The metrics, in kernel_counters' order. All four are collected in one
// pass on Hopper (GH100; open() refuses a configuration that needs more:
// the "of peak sustained active" form of the last one would need a second).
const char* const metric_names[] = {
    "smsp__inst_executed.sum",
    "smsp__inst_executed_op_local_ld.sum",
    "smsp__inst_executed_op_local_st.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
};
constexpr std::size_t metric_count = sizeof(metric_names) / sizeof(metric_names[0]);

// CUPTI's entry points, resolved from the library loaded at run time.
struct cupti_api {
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiProfilerInitialize) initialize = nullptr;
  decltype(&cuptiProfilerDeInitialize) deinitialize = nullptr;
  decltype(&cuptiDeviceGetChipName) chip_name = nullptr;
  decltype(&cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&cuptiProfilerHostConfigAddMetrics) host_add_metrics = nullptr;
  decltype(&cuptiProfilerHostGetConfigImageSize) host_config_size = nullptr;
  decltype(&cuptiProfilerHostGetConfigImage) host_config = nullptr;
  decltype(&cuptiProfilerHostGetNumOfPasses) host_passes = nullptr;
  decltype(&cuptiProfilerHostEvaluateToGpuValues) host_evaluate = nullptr;
  decltype(&cuptiRangeProfilerEnable) enable = nullptr;
  decltype(&cuptiRangeProfilerDisable) disable = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataSize) counter_data_size = nullptr;
  decltype(&cuptiRangeProfilerCounterDataImageInitialize) counter_data_init = nullptr;
  decltype(&cuptiRangeProfilerSetConfig) set_config = nullptr;
  decltype(&cuptiRangeProfilerStart) start = nullptr;
  decltype(&cuptiRangeProfilerStop) stop = nullptr;
  decltype(&cuptiRangeProfilerPushRange) push = nullptr;
  decltype(&cuptiRangeProfilerPopRange) pop = nullptr;
  decltype(&cuptiRangeProfilerDecodeData) decode = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataInfo) counter_data_info = nullptr;
  decltype(&cuCtxGetCurrent) current_context = nullptr;
};

// A CUPTI parameter block: zeroed, with its size set (CUPTI's versioning).
template <class P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

template <class F>
bool resolve(void* lib, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && missing.empty()) missing = name;
  return out != nullptr;
}

// libcupti.so.13 from the loader's path, else from the toolkit's usual folders.
void* load_cupti(std::string& error) {
  const char* candidates[] = {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13",
                              "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                              "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"};
  std::string first_error;
  for (const char* path : candidates) {
    if (void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return lib;
    if (first_error.empty()) {
      const char* e = dlerror();
      first_error = e ? e : path;
    }
  }
  error = "cannot load CUPTI (libcupti.so.13, part of the CUDA toolkit): " + first_error +
          "; put its folder on LD_LIBRARY_PATH";
  return nullptr;
}

}  // namespace

struct counter_session::state {
  void* lib = nullptr;
  cupti_api api;
  bool profiler_initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  CUcontext context = nullptr;
  CUpti_RangeProfiler_Object* range = nullptr;
  bool started = false, pushed = false;

  // "what: CUPTI's words" for a failed call, or "" when it succeeded.
  std::string check(CUptiResult r, const char* what) const {
    if (r == CUPTI_SUCCESS) return "";
    const char* text = nullptr;
    if (api.result_string) api.result_string(r, &text);
    std::string why = text ? text : "CUPTI error " + std::to_string(static_cast<int>(r));
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      why += " (profiling counters are restricted to administrators on this machine: NVreg_RestrictProfilingToAdminUsers)";
    }
    return std::string(what) + ": " + why;
  }

  // Ends whatever begin() opened; used on the error paths and at the end.
  void close_range() {
    if (pushed) {
      auto p = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = range;
      api.pop(&p);
      pushed = false;
    }
    if (started) {
      auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = range;
      api.stop(&p);
      started = false;
    }
    if (range) {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = range;
      api.disable(&p);
      range = nullptr;
    }
  }

  ~state() {
    if (!lib) return;
    close_range();
    if (host) {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host;
      api.host_deinitialize(&p);
    }
    if (profiler_initialized) {
      auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      api.deinitialize(&p);
    }
    // The library stays loaded: CUPTI keeps callbacks registered in the
    // driver for the life of the process.
  }
};

counter_session::counter_session(std::unique_ptr<state> s) : s_(std::move(s)) {}
counter_session::~counter_session() = default;

std::unique_ptr<counter_session> counter_session::open(std::string& error) {
  auto s = std::make_unique<state>();
  s->lib = load_cupti(error);
  if (!s->lib) return nullptr;
  cupti_api& a = s->api;
  std::string missing;
  resolve(s->lib, "cuptiGetResultString", a.result_string, missing);
  resolve(s->lib, "cuptiProfilerInitialize", a.initialize, missing);
  resolve(s->lib, "cuptiProfilerDeInitialize", a.deinitialize, missing);
  resolve(s->lib, "cuptiDeviceGetChipName", a.chip_name, missing);
  resolve(s->lib, "cuptiProfilerHostInitialize", a.host_initialize, missing);
  resolve(s->lib, "cuptiProfilerHostDeinitialize", a.host_deinitialize, missing);
  resolve(s->lib, "cuptiProfilerHostConfigAddMetrics", a.host_add_metrics, missing);
  resolve(s->lib, "cuptiProfilerHostGetConfigImageSize", a.host_config_size, missing);
  resolve(s->lib, "cuptiProfilerHostGetConfigImage", a.host_config, missing);
  resolve(s->lib, "cuptiProfilerHostGetNumOfPasses", a.host_passes, missing);
  resolve(s->lib, "cuptiProfilerHostEvaluateToGpuValues", a.host_evaluate, missing);
  resolve(s->lib, "cuptiRangeProfilerEnable", a.enable, missing);
  resolve(s->lib, "cuptiRangeProfilerDisable", a.disable, missing);
  resolve(s->lib, "cuptiRangeProfilerGetCounterDataSize", a.counter_data_size, missing);
  resolve(s->lib, "cuptiRangeProfilerCounterDataImageInitialize", a.counter_data_init, missing);
  resolve(s->lib, "cuptiRangeProfilerSetConfig", a.set_config, missing);
  resolve(s->lib, "cuptiRangeProfilerStart", a.start, missing);
  resolve(s->lib, "cuptiRangeProfilerStop", a.stop, missing);
  resolve(s->lib, "cuptiRangeProfilerPushRange", a.push, missing);
  resolve(s->lib, "cuptiRangeProfilerPopRange", a.pop, missing);
  resolve(s->lib, "cuptiRangeProfilerDecodeData", a.decode, missing);
  resolve(s->lib, "cuptiRangeProfilerGetCounterDataInfo", a.counter_data_info, missing);
  if (!missing.empty()) {
    error = "the CUPTI found has no " + missing + " (the range profiler needs CUDA 12.6 or later)";
    s->lib = nullptr;  // nothing to tear down
    return nullptr;
  }
  // The driver is already loaded by the runtime; its context is the one profiled.
  if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    resolve(driver, "cuCtxGetCurrent", a.current_context, missing);
  }
  int device = 0;
  if (cudaFree(nullptr) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess || !a.current_context ||
      a.current_context(&s->context) != CUDA_SUCCESS || !s->context) {
    error = "no CUDA context to profile";
    s->lib = nullptr;
    return nullptr;
  }

  auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (error = s->check(a.initialize(&init), "cuptiProfilerInitialize"); !error.empty()) return nullptr;
  s->profiler_initialized = true;
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (error = s->check(a.chip_name(&chip), "cuptiDeviceGetChipName"); !error.empty()) return nullptr;

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  if (error = s->check(a.host_initialize(&host), "cuptiProfilerHostInitialize"); !error.empty()) return nullptr;
  s->host = host.pHostObject;
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = s->host;
  add.ppMetricNames = const_cast<const char**>(metric_names);
  add.numMetrics = metric_count;
  if (error = s->check(a.host_add_metrics(&add), "cuptiProfilerHostConfigAddMetrics"); !error.empty()) {
    error += std::string(" (chip ") + chip.pChipName + ")";
    return nullptr;
  }
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = s->host;
  if (error = s->check(a.host_config_size(&size), "cuptiProfilerHostGetConfigImageSize"); !error.empty()) return nullptr;
  s->config.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = s->host;
  image.configImageSize = s->config.size();
  image.pConfigImage = s->config.data();
  if (error = s->check(a.host_config(&image), "cuptiProfilerHostGetConfigImage"); !error.empty()) return nullptr;
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = s->config.size();
  passes.pConfigImage = s->config.data();
  if (error = s->check(a.host_passes(&passes), "cuptiProfilerHostGetNumOfPasses"); !error.empty()) return nullptr;
  if (passes.numOfPasses != 1) {
    error = "the counters need " + std::to_string(passes.numOfPasses) + " passes on chip " + chip.pChipName +
            "; the measured kernel can run only once";
    return nullptr;
  }
  return std::unique_ptr<counter_session>(new counter_session(std::move(s)));
}

namespace {

// The steps of begin() after the device is idle: "" when the range is open,
// else what CUPTI refused (the caller closes what was opened).
std::string open_range(counter_session::state& s) {
  const cupti_api& a = s.api;
  auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = s.context;
  if (std::string e = s.check(a.enable(&enable), "cuptiRangeProfilerEnable"); !e.empty()) return e;
  s.range = enable.pRangeProfilerObject;
  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = s.range;
  size.pMetricNames = const_cast<const char**>(metric_names);
  size.numMetrics = metric_count;
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  if (std::string e = s.check(a.counter_data_size(&size), "cuptiRangeProfilerGetCounterDataSize"); !e.empty()) return e;
  s.counter_data.assign(size.counterDataSize, 0);
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = s.range;
  init.counterDataSize = s.counter_data.size();
  init.pCounterData = s.counter_data.data();
  if (std::string e = s.check(a.counter_data_init(&init), "cuptiRangeProfilerCounterDataImageInitialize"); !e.empty()) return e;
  // One user range, replayed by nobody: the one pass open() checked for.
  auto set = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = s.range;
  set.configSize = s.config.size();
  set.pConfig = s.config.data();
  set.counterDataImageSize = s.counter_data.size();
  set.pCounterDataImage = s.counter_data.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (std::string e = s.check(a.set_config(&set), "cuptiRangeProfilerSetConfig"); !e.empty()) return e;
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.range;
  if (std::string e = s.check(a.start(&start), "cuptiRangeProfilerStart"); !e.empty()) return e;
  s.started = true;
  auto push = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = s.range;
  push.pRangeName = "measured kernel";
  if (std::string e = s.check(a.push(&push), "cuptiRangeProfilerPushRange"); !e.empty()) return e;
  s.pushed = true;
  return "";
}

// The steps of end() after the counted kernel: pop, stop, decode; "" when
// all succeeded, else what CUPTI refused (the caller closes the rest).
std::string close_and_decode(counter_session::state& s, std::size_t& dropped) {
  const cupti_api& a = s.api;
  auto pop = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = s.range;
  s.pushed = false;
  if (std::string e = s.check(a.pop(&pop), "cuptiRangeProfilerPopRange"); !e.empty()) return e;
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.range;
  s.started = false;
  if (std::string e = s.check(a.stop(&stop), "cuptiRangeProfilerStop"); !e.empty()) return e;
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.range;
  if (std::string e = s.check(a.decode(&decode), "cuptiRangeProfilerDecodeData"); !e.empty()) return e;
  dropped = decode.numOfRangeDropped;
  return "";
}

}  // namespace

bool counter_session::begin(std::string& error) {
  state& s = *s_;
  if (cudaDeviceSynchronize() != cudaSuccess) {
    error = "the device failed before the counted kernel";
    return false;
  }
  error = open_range(s);
  if (error.empty()) return true;
  s.close_range();
  return false;
}

bool counter_session::end(kernel_counters& out, std::string& error) {
  state& s = *s_;
  const cupti_api& a = s.api;
  if (!s.pushed) {
    error = "counters: no range open";
    return false;
  }
  std::size_t dropped = 0;
  error = cudaDeviceSynchronize() != cudaSuccess ? "the counted kernel failed" : close_and_decode(s, dropped);
  s.close_range();  // whatever is still open; the counter data image holds what follows
  if (!error.empty()) return false;
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  if (error = s.check(a.counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo"); !error.empty()) return false;
  if (info.numTotalRanges != 1 || dropped != 0) {
    error = "counters: expected one profiled range, got " + std::to_string(info.numTotalRanges) + " (" +
            std::to_string(dropped) + " dropped)";
    return false;
  }
  double values[metric_count] = {};
  auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  eval.pHostObject = s.host;
  eval.pCounterDataImage = s.counter_data.data();
  eval.counterDataImageSize = s.counter_data.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = const_cast<const char**>(metric_names);
  eval.numMetrics = metric_count;
  eval.pMetricValues = values;
  if (error = s.check(a.host_evaluate(&eval), "cuptiProfilerHostEvaluateToGpuValues"); !error.empty()) return false;
  out.warp_instructions = values[0];
  out.local_loads = values[1];
  out.local_stores = values[2];
  out.issue_active_pct = values[3];
  return true;
}

}  // namespace gfsl::bench
