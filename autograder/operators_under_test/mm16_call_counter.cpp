// Linked into every operator that chapter 7 grades a harness against (the correct one and each planted bug,
// cmake/OperatorsUnderTest.cmake): counts the calls of course::mm16 made by the process that loaded it.
//
// When the environment names a file in COURSE_MM16_CALLS (the worker sets it to a file in the run's own folder; a
// child process started by the harness inherits it), each call appends one byte to that file. The judge reads the
// file's size after the run: the number of calls, children included, and still right when the process ended in
// exit(), abort() or a kill, since nothing waits for an exit handler. Without the variable (a student running a
// harness by hand) nothing is installed.
//
// The count comes from inside the process that runs the harness, so a harness written to forge it (appending to the
// file itself) is not stopped: it tells a harness that tests by calling the operator from one that never calls it.
#include <ATen/record_function.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

int calls_file = -1;
std::atomic<long> recorded{0};
constexpr long kMaxRecorded = 1L << 20;  // a harness calling it in a loop does not fill the disk

// Every operator call through the dispatcher (Python's torch.ops.course.mm16, C++ op.call, opcheck's and
// gradcheck's calls) passes here once, before any kernel runs: an invalid call that raises is a call too.
std::unique_ptr<at::ObserverContext> on_operator(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (name && std::strcmp(name, "course::mm16") == 0 && recorded.fetch_add(1) < kMaxRecorded) {
    ssize_t written = ::write(calls_file, "1", 1);
    (void)written;
  }
  return nullptr;
}

struct InstallCounter {
  InstallCounter() {
    const char* path = std::getenv("COURSE_MM16_CALLS");
    if (!path || !*path) return;
    calls_file = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (calls_file < 0) return;
    at::addGlobalCallback(at::RecordFunctionCallback(&on_operator).scopes({at::RecordScope::FUNCTION}));
  }
} install_counter;

}  // namespace
