"""Chapter 7: runs the student's test harness (test_mm16.py) with unittest against one operator library.

The judge picks the library (the correct operator or a planted-bug one) and passes it as MM16_LIBRARY; the harness
loads it itself. The report lists every test's outcome; the judge decides whether that outcome caught the bug. If the
operator ends this process (exit() on an invalid call), no report is written: the judge sees a run that never
finished, which is what a real test runner would show too.

The operators under test count their own calls (autograder/operators_under_test/mm16_call_counter.cpp) into the file
COURSE_MM16_CALLS names: the judge asks for one in this run's folder, and reads it after the run. Child processes the
harness starts inherit the variable, so their calls count too.
"""

import os
import sys
import unittest

from groups_common import describe_error, group, submission_module


def _first_lines(text, n=6, width=500):
    """The last n lines of a traceback (where the assertion's message is), each cut to `width` characters."""
    lines = [
        line if len(line) <= width else line[:width] + " ..." for line in text.strip().splitlines() if line.strip()
    ]
    return "\n".join(lines[-n:])


@group("harness")
def group_harness(request, inputs):
    os.environ["MM16_LIBRARY"] = request["args"]["target"]
    calls = request["args"].get("calls_file", "")
    if calls:
        os.environ["COURSE_MM16_CALLS"] = os.path.join(request["out_dir"], calls)
    module = submission_module(request, "test_mm16")
    # unittest finds a module's setUpModule / tearDownModule through sys.modules: without this it would skip them
    # silently, and the harness would run differently here than under `python test_mm16.py`.
    sys.modules[module.__name__] = module
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    outcomes = {}

    class Recorder(unittest.TestResult):
        def addSuccess(self, test):
            outcomes[test.id()] = {"outcome": "passed"}

        def addFailure(self, test, err):
            outcomes[test.id()] = {"outcome": "failed", "message": _first_lines(self._exc_info_to_string(err, test))}

        def addError(self, test, err):
            outcomes[test.id()] = {"outcome": "error", "message": _first_lines(self._exc_info_to_string(err, test))}

        def addSkip(self, test, reason):
            outcomes[test.id()] = {"outcome": "skipped", "message": str(reason)}

        def addExpectedFailure(self, test, err):
            outcomes[test.id()] = {"outcome": "passed"}

        def addUnexpectedSuccess(self, test):
            outcomes[test.id()] = {"outcome": "failed", "message": "unexpected success"}

    result = Recorder()
    try:
        suite.run(result)
    except Exception as e:  # noqa: BLE001 - a suite that cannot run is a report too
        outcomes["(the suite)"] = {"outcome": "error", "message": describe_error(e)}
    tests = [{"id": k.split(".", 1)[-1], **v} for k, v in outcomes.items()]
    return {"tests": tests}, {}
