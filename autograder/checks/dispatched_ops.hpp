// Which PyTorch operators a CPU kernel may dispatch itself: allocation, copies and views. Anything else (aten::mm,
// aten::add, aten::mul, aten::sum, ...) computes part of the result with PyTorch's code, not the exercise's. The
// worker reports the names the profiler recorded as direct children of the op's own event; kernel.cpu (03) and
// op.kernel (01) judge them here.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace judge {

inline bool allocation_copy_or_view(const std::string& op) {
  static const std::set<std::string> ops = {"aten::empty",
                                            "aten::empty_like",
                                            "aten::empty_strided",
                                            "aten::new_empty",
                                            "aten::new_empty_strided",
                                            "aten::zeros",
                                            "aten::zeros_like",
                                            "aten::new_zeros",
                                            "aten::zero_",
                                            "aten::fill_",
                                            "aten::full",
                                            "aten::full_like",
                                            "aten::resize_",
                                            "aten::copy_",
                                            "aten::clone",
                                            "aten::contiguous",
                                            "aten::to",
                                            "aten::_to_copy",
                                            "aten::detach",
                                            "aten::alias",
                                            "aten::lift_fresh",
                                            "aten::view",
                                            "aten::reshape",
                                            "aten::_reshape_alias",
                                            "aten::as_strided",
                                            "aten::t",
                                            "aten::transpose",
                                            "aten::permute",
                                            "aten::expand",
                                            "aten::select",
                                            "aten::slice",
                                            "aten::narrow",
                                            "aten::unsqueeze",
                                            "aten::squeeze",
                                            "aten::flatten",
                                            "aten::view_as",
                                            "aten::expand_as",
                                            "aten::reshape_as",
                                            "aten::movedim",
                                            "aten::swapaxes",
                                            "aten::swapdims",
                                            "aten::t_",
                                            "aten::transpose_",
                                            "aten::as_strided_",
                                            "aten::unsqueeze_",
                                            "aten::squeeze_",
                                            "aten::resize_as_",
                                            "aten::unfold",
                                            "aten::unbind",
                                            "aten::split",
                                            "aten::chunk",
                                            "aten::cat",
                                            "aten::stack",  // pieces and copies
                                            "aten::item",
                                            "aten::_local_scalar_dense"};
  return ops.count(op) > 0;
}

template <class Names>
std::string comma_joined(const Names& names) {
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The operators of `dispatched` that are not allocation, copies or views, comma-separated ("" when none).
inline std::string computing_ops(const std::vector<std::string>& dispatched) {
  std::vector<std::string> computing;
  for (auto& op : dispatched)
    if (!allocation_copy_or_view(op)) computing.push_back(op);
  return comma_joined(computing);
}

// What a passing row says ran inside `op` ("course::mm16"), and what a failing one names.
inline std::string only_layout_ran(const std::set<std::string>& ran, const std::string& op) {
  return (ran.empty() ? std::string("no PyTorch operator") : "only " + comma_joined(ran)) + " ran inside " + op +
         " (allocation, copies, views)";
}
inline std::string other_ops_ran(const std::string& op, const std::string& computing) {
  return "PyTorch operators other than allocation, copies and views ran inside " + op + ": " + computing;
}

constexpr const char* kAllowedInsideTheOp =
    "only allocation, copies and views (aten::empty, aten::zeros, aten::copy_, aten::contiguous, aten::to, views)";

}  // namespace judge
