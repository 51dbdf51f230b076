// Chapter 2: reading an operator's schema from C++, through the dispatcher.
// Built as build/print_schema; run:  build/print_schema build/lib/solutions/02_schema/libmm16_schema.so
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>

#include <iostream>

// --8<-- [start:inspect]
void print_schema(const char* name, const char* overload = "") {
  std::optional<c10::OperatorHandle> op = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!op) {
    std::cout << name << (*overload ? "." : "") << overload << " is not registered\n";
    return;
  }
  const c10::FunctionSchema& schema = op->schema();
  std::cout << schema << "\n";  // printed exactly as Python prints it
  for (const c10::Argument& arg : schema.arguments())
    std::cout << "  " << arg.name() << ": " << arg.type()->str() << (arg.kwarg_only() ? ", keyword-only" : "")
              << (arg.alias_info() && arg.alias_info()->isWrite() ? ", written in place" : "") << "\n";
  std::cout << "  tagged out: " << (op->hasTag(at::Tag::out) ? "yes" : "no")
            << ", pt2_compliant_tag: " << (op->hasTag(at::Tag::pt2_compliant_tag) ? "yes" : "no") << "\n";
  std::cout << "  CPU kernel: " << (op->hasKernelForDispatchKey(c10::DispatchKey::CPU) ? "yes" : "no") << "\n";
}
// --8<-- [end:inspect]

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: print_schema LIBRARY.so\n";
    return 2;
  }
  // Loading the library runs its TORCH_LIBRARY block, which registers the schemas with the dispatcher.
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    std::cerr << dlerror() << "\n";
    return 1;
  }
  print_schema("course::mm16_scaled");
  print_schema("course::mm16", "out");  // the overload mm16.out
  print_schema("course::mm16_missing");
  return 0;
}
