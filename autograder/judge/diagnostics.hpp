// A failed build read for a student: the first error in the student's own files, in one line, and the compiler's
// output reordered so that error (its source line and caret) comes first.
//
// Read from the compiler's text, not from `g++ -fdiagnostics-format=json`: measured with the judge's g++ 12 and
// -include of the precompiled torch header, the JSON form places an error inside a macro argument at the macro's
// expansion (mm16_cpu.cpp:39:3, the AT_DISPATCH line, for an error at 51:50 in the kernel body every exercise wraps in
// AT_DISPATCH), and it leaves out the "required from here" lines that lead from an error in a library header back to
// the student's line. The text form has both. nvcc's device-code errors (its EDG front end) have no structured form
// and are read as text too, as are the linker's.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace judge {

struct DiagnosticsContext {
  // The submission's files as the judge copied them into build_dir/src: name -> content. Only these are the
  // student's; their content gives the source line of an error the compiler reported elsewhere.
  std::map<std::string, std::string> student_files;
  std::filesystem::path build_dir;        // sources are compiled as src/NAME from here; objects are NAME.o here
  std::vector<std::string> include_dirs;  // a header under one of these is shown relative to it (ATen/core/...)
  std::string compiling;                  // the source whose compilation failed; empty for the link
};

struct CompilerErrors {
  bool found = false;  // an error was recognised in the output
  std::string first;   // the first error, in the student's files where it can be placed there:
                       // "mm16_cpu.cpp:51:50: 'k' was not declared in this scope"
  int more = 0;        // distinct errors after it (an error repeated word for word counts once)
  std::string text;    // the first error with its source line and caret, then the rest of the output in the
                       // compiler's order, less the include chains through files that are not the student's
};

// `output` is what the compiler (or the linker) printed, in the C locale.
CompilerErrors read_compiler_errors(const std::string& output, const DiagnosticsContext& ctx);

// The judge links with -z defs --warn-unresolved-symbols: each symbol used and defined in none of the libraries
// linked is a warning, and the link succeeds as it would without them. A C++ symbol among them (a function with its
// signature, a vtable, anything in a namespace) is defined nowhere the loader would look either: torch's C++ is all
// in the libraries linked. A C symbol may be found at load (Python's C API in the worker process; OpenMP, cuBLAS in
// libraries torch's own depend on) and is left to the loader. Returns the linker's lines about the C++ ones, as
// errors ("undefined reference to `f(long)'", each after its "in function" line); "" when there is none.
std::string undefined_cxx_references(const std::string& link_output);

}  // namespace judge
