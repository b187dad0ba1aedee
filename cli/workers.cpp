#include "cli/workers.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linearizability/report.hpp"

#if defined(GFSL_HAVE_CUDA)
#include "exec/cuda/device_runner.hpp"
#endif

extern char** environ;

namespace gfsl::cli {

namespace {

bool parse_count(const std::string& text, unsigned long& out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::stoul(text);
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  if (!text.empty() && text.back() == sep) out.push_back("");
  return out;
}

std::atomic<bool>* signal_flag = nullptr;
std::vector<std::string> program_args;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

extern "C" void on_stop_signal(int) {
  if (signal_flag) signal_flag->store(true);
}

#if defined(GFSL_HAVE_CUDA)
// CUDA's device count, asked in a short-lived child: a parent that
// initialised CUDA could not fork workers that use it (mutants), and it
// leaves the device to the workers alone.
unsigned long device_count_in_child() {
  int fds[2];
  if (pipe(fds) != 0) return static_cast<unsigned long>(cuda_device_count());
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int n = cuda_device_count();
    (void)!write(fds[1], &n, sizeof n);
    _exit(0);
  }
  close(fds[1]);
  int n = 0;
  if (pid < 0 || read(fds[0], &n, sizeof n) != static_cast<ssize_t>(sizeof n)) n = 0;
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return n > 0 ? static_cast<unsigned long>(n) : 0;
}
#endif

}  // namespace

std::string resolve_devices(const std::string& spec, std::vector<device_slot>& out) {
  out.clear();
  std::vector<std::string> visible;
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  const char* fake = std::getenv("GFSL_DEVICE_COUNT");
  if (cvd && *cvd) {
    // CUDA stops at the first entry it cannot use; an empty entry is one.
    for (const std::string& e : split(cvd, ',')) {
      if (e.empty()) break;
      visible.push_back(e);
    }
  } else {
    unsigned long count = 0;
    if (fake) {
      if (!parse_count(fake, count)) return std::string("GFSL_DEVICE_COUNT=") + fake + ": expected a number of devices";
    } else {
#if defined(GFSL_HAVE_CUDA)
      count = device_count_in_child();
#else
      return "--devices " + spec + ": no CUDA device (this build has no CUDA backend)";
#endif
    }
    for (unsigned long i = 0; i < count; ++i) visible.push_back(std::to_string(i));
  }
  if (visible.empty()) return "--devices " + spec + ": no CUDA device is visible" + (cvd ? " (CUDA_VISIBLE_DEVICES is empty)" : "");
  if (spec == "all") {
    for (unsigned i = 0; i < visible.size(); ++i) out.push_back({i, visible[i]});
    return {};
  }
  std::set<unsigned long> seen;
  for (const std::string& item : split(spec, ',')) {
    unsigned long i = 0;
    if (!parse_count(item, i)) return "--devices " + spec + ": expected all or device numbers such as 0,2";
    if (i >= visible.size()) {
      return "--devices " + spec + ": device " + item + " is not visible (" + std::to_string(visible.size()) + " visible: 0 to " +
             std::to_string(visible.size() - 1) + ")";
    }
    if (!seen.insert(i).second) return "--devices " + spec + ": device " + item + " is named twice";
    out.push_back({static_cast<unsigned>(i), visible[i]});
  }
  return {};
}

std::string cuda_unusable_reason() {
  if (const char* fake = std::getenv("GFSL_DEVICE_COUNT")) {
    unsigned long count = 0;
    if (!parse_count(fake, count)) return std::string("GFSL_DEVICE_COUNT=") + fake + ": expected a number of devices";
    return count ? std::string() : "no CUDA device is visible (GFSL_DEVICE_COUNT=0)";
  }
#if defined(GFSL_HAVE_CUDA)
  if (device_count_in_child() > 0) return {};
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  return std::string("no CUDA device is visible") + (cvd ? std::string(" (CUDA_VISIBLE_DEVICES=\"") + cvd + "\")" : std::string());
#else
  return "no CUDA device (this build has no CUDA backend)";
#endif
}

bool worth_restarting(int code, int signal) {
  return signal != 0 || code == 4;
}

std::string self_program() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "gfsl";
  buf[n] = '\0';
  return buf;
}

void stop_on_signals(std::atomic<bool>& flag) {
  signal_flag = &flag;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // A second signal ends the process as usual, except in a worker: it may be
  // told twice (by its process group's signal and by its parent), and its
  // parent ends it with SIGKILL if it does not stop in time.
  sa.sa_flags = std::getenv("GFSL_WORKER") ? 0 : SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

namespace {

pid_t spawn(const worker_plan& p, const std::vector<std::string>& args, std::string& error) {
  const std::string program = self_program();
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = entry.rfind("GFSL_WORKER=", 0) == 0;
    for (const auto& [name, value] : p.env) replaced = replaced || entry.rfind(name + "=", 0) == 0;
    if (!replaced) env_strings.push_back(entry);
  }
  for (const auto& [name, value] : p.env) env_strings.push_back(name + "=" + value);
  env_strings.push_back("GFSL_WORKER=1");
  std::vector<char*> argv{const_cast<char*>(program.c_str())}, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out_fd = -1, err_fd = -1;
  if (!p.output.empty()) {
    out_fd = ::open(p.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) {
      error = p.output + ": cannot write the worker's output: " + std::strerror(errno);
      return -1;
    }
  }
  if (!p.errors.empty()) {
    err_fd = ::open(p.errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) {
      error = p.errors + ": cannot write the worker's output: " + std::strerror(errno);
      if (out_fd >= 0) ::close(out_fd);
      return -1;
    }
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    error = std::string("cannot start ") + p.name + ": " + std::strerror(errno);
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    return -1;
  }
  if (pid == 0) {
    // A worker must not outlive its parent (a parent killed with SIGKILL).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (out_fd >= 0) dup2(out_fd, 1);
    if (err_fd >= 0 || out_fd >= 0) dup2(err_fd >= 0 ? err_fd : out_fd, 2);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  return pid;
}

std::string describe(int code, int signal) {
  return signal ? "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")" : "exit " + std::to_string(code);
}

}  // namespace

std::string last_line_of(const std::string& path) {
  if (path.empty()) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > 4096 ? size - 4096 : 0;
  std::string text(static_cast<std::size_t>(size - from > 0 ? size - from : 0), '\0');
  const ssize_t n = text.empty() ? 0 : ::pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const std::size_t nl = text.rfind('\n');
  return nl == std::string::npos ? (from == 0 ? text : std::string()) : text.substr(nl + 1);
}

std::vector<worker_result> run_workers(const std::vector<worker_plan>& plans, unsigned max_restarts, const std::atomic<bool>& stop,
                                       const std::function<bool(std::size_t, const worker_result&)>& on_exit,
                                       const std::function<void(const std::string&)>& say,
                                       const std::function<void()>& tick) {
  std::vector<worker_result> results(plans.size());
  std::vector<pid_t> pids(plans.size(), -1);
  std::vector<bool> asked_to_stop(plans.size(), false);
  bool stopping = false;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::string error;
    pids[i] = spawn(plans[i], plans[i].args, error);
    if (pids[i] < 0) {
      say(error);
      results[i].code = 4;
      results[i].status = error;
    }
  }
  // Workers told to stop finish the run in progress and write their
  // records; one still running a minute later (a hung device) is killed.
  using clock = std::chrono::steady_clock;
  clock::time_point kill_after = clock::time_point::max();
  auto stop_all = [&] {
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (pids[i] > 0 && !asked_to_stop[i]) {
        kill(pids[i], SIGTERM);
        asked_to_stop[i] = true;
      }
    }
    kill_after = std::min(kill_after, clock::now() + std::chrono::seconds(60));
  };
  auto running = [&] {
    for (pid_t p : pids) {
      if (p > 0) return true;
    }
    return false;
  };
  while (running()) {
    if (stop.load() && !stopping) {
      stopping = true;
      stop_all();
    }
    int status = 0;
    const pid_t done = waitpid(-1, &status, WNOHANG);
    if (done <= 0) {
      if (done < 0 && errno == ECHILD) break;
      if (clock::now() > kill_after) {
        for (pid_t p : pids) {
          if (p > 0) kill(p, SIGKILL);
        }
        kill_after = clock::time_point::max();
      }
      if (tick) tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    std::size_t i = 0;
    while (i < pids.size() && pids[i] != done) ++i;
    if (i == pids.size()) continue;  // a process this function did not start
    pids[i] = -1;
    worker_result& r = results[i];
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const bool we_stopped_it = asked_to_stop[i] && (r.signal == SIGTERM || r.signal == SIGKILL);
    r.stopped = we_stopped_it;
    r.last_line = last_line_of(plans[i].errors.empty() ? plans[i].output : plans[i].errors);
    if (!stopping && !we_stopped_it && worth_restarting(r.code, r.signal) && r.restarts < max_restarts &&
        !plans[i].restart_args.empty()) {
      say(plans[i].name + " ended (" + describe(r.code, r.signal) + (r.last_line.empty() ? "" : ": " + r.last_line) +
          "): started again");
      ++r.restarts;
      std::string error;
      pids[i] = spawn(plans[i], plans[i].restart_args, error);
      if (pids[i] > 0) continue;
      say(error);
    }
    r.status = describe(r.code, r.signal) +
               (r.restarts ? " (restarted " + std::to_string(r.restarts) + (r.restarts == 1 ? " time)" : " times)") : "");
    if (on_exit && on_exit(i, r) && !stopping) {
      stopping = true;
      stop_all();
    }
  }
  return results;
}

}  // namespace gfsl::cli

namespace gfsl::cli {

void remember_command_line(int argc, char** argv) { program_args.assign(argv + 1, argv + argc); }

std::vector<std::string> command_line_without(const std::vector<std::string>& options) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < program_args.size(); ++i) {
    bool drop = false;
    for (const std::string& option : options) {
      if (program_args[i] == option) {
        ++i;  // and its value
        drop = true;
        break;
      }
      if (program_args[i].rfind(option + "=", 0) == 0) drop = true;
    }
    if (!drop) out.push_back(program_args[i]);
  }
  return out;
}

std::vector<device_output> run_on_each_device(const std::vector<device_slot>& devices, const std::vector<std::string>& extra,
                                              const std::string& figures_option, const std::string& command_name,
                                              const std::vector<std::string>& drop) {
  namespace fs = std::filesystem;
  char pattern[] = "/tmp/gfsl-devices-XXXXXX";
  const char* made = mkdtemp(pattern);
  const std::string dir = made ? made : "/tmp";
  std::vector<worker_plan> plans;
  for (const device_slot& d : devices) {
    const std::string stem = dir + "/device-" + std::to_string(d.index);
    worker_plan p;
    p.name = command_name + " on device " + std::to_string(d.index);
    std::vector<std::string> dropped{"--devices", figures_option};
    dropped.insert(dropped.end(), drop.begin(), drop.end());
    p.args = command_line_without(dropped);
    p.args.insert(p.args.end(), extra.begin(), extra.end());
    p.args.insert(p.args.end(), {"--worker-device", d.visible});
    if (!figures_option.empty()) p.args.insert(p.args.end(), {figures_option, stem + ".figures"});
    p.restart_args = p.args;
    p.env.push_back({"CUDA_VISIBLE_DEVICES", d.visible});
    p.output = stem + ".out";
    p.errors = stem + ".err";
    plans.push_back(std::move(p));
  }
  static std::atomic<bool> stop{false};
  stop_on_signals(stop);
  const std::vector<worker_result> results = run_workers(plans, 2, stop, nullptr, [&](const std::string& line) {
    std::fprintf(stderr, "%s: %s\n", command_name.c_str(), gfsl::lin::printable(line).c_str());
  });
  std::vector<device_output> out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    device_output o;
    o.slot = devices[i];
    o.result = results[i];
    o.out = slurp(plans[i].output);
    o.err = slurp(plans[i].errors);
    if (!figures_option.empty()) o.figures = slurp(dir + "/device-" + std::to_string(devices[i].index) + ".figures");
    out.push_back(std::move(o));
  }
  std::error_code ec;
  if (made) fs::remove_all(dir, ec);
  return out;
}

}  // namespace gfsl::cli

namespace gfsl::cli {

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      any = false;
    } else if (c != '\r') {
      field += c;
      any = true;
    }
  }
  if (any) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

int combined_exit_code(const std::vector<device_output>& outputs) {
  int rc = 0;
  // An interrupted worker (3: SIGINT or SIGTERM, what it ran reported) is
  // undecided, not a run error: it ranks below every other failure.
  auto rank = [](int code) { return code == 1 ? 4 : code == 4 ? 3 : code == 2 ? 2 : code == 3 ? 1 : 0; };
  for (const device_output& o : outputs) {
    const int code = o.result.signal ? 4 : o.result.code >= 0 && o.result.code <= 3 ? o.result.code : 4;
    if (rank(code) > rank(rc)) rc = code;
  }
  return rc;
}

}  // namespace gfsl::cli
