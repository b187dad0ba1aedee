// Worker processes: `--jobs N` and `--devices` run a command as child
// processes of the gfsl binary, one per job or per GPU, so that a worker that
// faults (a device left unusable, a crash) costs that worker alone, which is
// started again, and no two workers share RapidCheck's or CUDA's process state.
//
// A device worker sees one GPU: CUDA_VISIBLE_DEVICES is set to that device's
// entry of the parent's CUDA_VISIBLE_DEVICES (or its number when the parent
// has none), so inside the worker it is device 0.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gfsl::cli {

struct device_slot {
  unsigned index = 0;      // the device's number among the visible ones (what --devices names)
  std::string visible;     // what the worker's CUDA_VISIBLE_DEVICES holds
};

// The devices of `spec`: "all" (every visible device) or "0,2,...". The
// visible devices are the entries of CUDA_VISIBLE_DEVICES when it is set,
// otherwise CUDA's device count. GFSL_DEVICE_COUNT, when set, stands for
// CUDA's count (tests of the worker logic on machines without a GPU). Empty
// on success; otherwise one line.
std::string resolve_devices(const std::string& spec, std::vector<device_slot>& out);

// Why the cuda backend cannot run here ("" when a CUDA device is usable):
// this build has no CUDA backend, or CUDA sees no device (asked in a
// short-lived child, as resolve_devices does; GFSL_DEVICE_COUNT stands for
// the count). `gfsl fuzz` asks it before anything runs, for a campaign of the
// command line and for a resumed journal alike, so that no run is made only
// to fail (`--resume` of a cuda journal on a machine without a GPU ran every
// run as a run error and reported a failure of the structure).
std::string cuda_unusable_reason();

struct worker_plan {
  std::string name;                                        // "worker 3 (device 1)": for messages
  std::vector<std::string> args;                           // after the program name
  std::vector<std::string> restart_args;                   // a worker that faulted is started again with these (empty: never)
  std::vector<std::pair<std::string, std::string>> env;    // added to the parent's environment
  std::string output;                                      // stdout (and stderr, unless `errors` is set) goes to this file ("" : inherited)
  std::string errors;                                      // stderr goes to this file
};

struct worker_result {
  int code = -1;          // exit code; -1 when a signal ended it
  int signal = 0;
  unsigned restarts = 0;
  std::string status;     // "exit 0", "killed by signal 9 (restarted 1 time)"
  bool stopped = false;   // ended by the SIGTERM or SIGKILL this process sent it (a stop, not the worker's error)
  std::string last_line;  // the last line the worker wrote to its output (or errors) file: what it said went wrong
};

// Whether a worker that ended so is started again: ended by a signal nobody
// in this process sent, or with exit code 4 (the run's own error: a device
// fault, a kernel watchdog).
bool worth_restarting(int code, int signal);

// The last line of a worker's output file (at most its last 4 KiB; "" when
// there is none), control characters and all: print it escaped.
std::string last_line_of(const std::string& path);

// Runs every plan at once and waits for all. When `stop` becomes true (a
// signal to the parent) every worker is sent SIGTERM and waited for. When
// `on_exit` returns true for a worker that ended, the others are sent SIGTERM
// (a fuzzing campaign stops at its first failure). A worker is restarted at
// most `max_restarts` times. `say` gets one line for each worker that could
// not be started and each one that ended on its own error and is started
// again (with its last line). `tick`, when given, is called about every 20 ms
// while workers run (progress lines).
std::vector<worker_result> run_workers(const std::vector<worker_plan>& plans, unsigned max_restarts, const std::atomic<bool>& stop,
                                       const std::function<bool(std::size_t, const worker_result&)>& on_exit,
                                       const std::function<void(const std::string&)>& say,
                                       const std::function<void()>& tick = nullptr);

// The running program (/proc/self/exe), for starting workers.
std::string self_program();

// The command line the program was started with (after its name), kept by
// main so that a command can start itself again on each device.
void remember_command_line(int argc, char** argv);
// That command line without `options` and their values ("--devices 0,1" or
// "--devices=0,1").
std::vector<std::string> command_line_without(const std::vector<std::string>& options);

// One run of this same command per device (`gfsl stress`, `gfsl bench`):
// the command line without --devices (and `figures_option`), plus `extra`
// and --worker-device, with
// CUDA_VISIBLE_DEVICES set to the device. Each worker's stdout and stderr
// are kept in files under a temporary folder, read back into the result.
struct device_output {
  device_slot slot;
  worker_result result;
  std::string out, err;
  std::string figures;   // the file named by `figures_option`, read back ("" : none)
};
// `drop`: options of the parent's command line (with their values) the
// workers do not get, such as an output FILE that only the parent writes.
std::vector<device_output> run_on_each_device(const std::vector<device_slot>& devices, const std::vector<std::string>& extra,
                                              const std::string& figures_option, const std::string& command_name,
                                              const std::vector<std::string>& drop = {});

// SIGINT and SIGTERM set `flag` (once: a second signal ends the process as
// usual). The handler stays installed for the life of the process.
void stop_on_signals(std::atomic<bool>& flag);

}  // namespace gfsl::cli

namespace gfsl::cli {

// The rows of a CSV text (RFC 4180 quoting), header first.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// The exit code of a command run on several devices: a violation on any
// device wins, then a run error (or a worker ended by a signal), then bad
// usage, then an interrupted worker (3).
int combined_exit_code(const std::vector<device_output>& outputs);

}  // namespace gfsl::cli
