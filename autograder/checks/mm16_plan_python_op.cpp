// Chapter 11's part of the CPU plan (an operator defined in Python, its Triton kernel run by Triton's interpreter on
// the CPU), drawn with mm16_plan_inputs.cpp's generator: edge tiles inside NaN buffers, opcheck's tests the
// interpreter can run, the in-place epilogue; and the names of the submission's Triton kernels, read from its source.
#include <fstream>
#include <regex>
#include <sstream>

#include "mm16_plan_draw.hpp"

namespace judge::mm16 {

void add_python_op_probes(Plan& p, std::mt19937_64& rng, const std::vector<ShapeClass>& sc) {
  if (has_check("triton.masked_edges")) {  // the classes whose sizes are never multiples of 16, and one of 16s
    for (std::size_t k : {0, 2, 5, 6, 3}) {
      Call c = single("edges." + std::to_string(k), sc[k].label, sc[k].M, sc[k].K, sc[k].N, "F16", "cpu", Role::Edges,
                      rng, View::InNanBuffer);
      c.view_b = View::InNanBuffer;
      p.add(std::move(c));
    }
    Call c =
        single("edges.f64", sc[0].label, sc[0].M, sc[0].K, sc[0].N, "F64", "cpu", Role::Edges, rng, View::InNanBuffer);
    c.view_b = View::InNanBuffer;
    p.add(std::move(c));
  }
  if (has_check("opcheck.interpreter")) {  // float16 (the fake's output dtype) and float64 with grad, a transposed a
    p.add(single("opcheck.f16.nonsquare", "non-square", 5, 7, 3, "F16", "cpu", Role::Opcheck, rng));
    p.add(single("opcheck.f64.view", "non-square, a transposed", 4, 6, 3, "F64", "cpu", Role::Opcheck, rng,
                 View::Transposed));
    for (const char* of : {"opcheck.f16.nonsquare", "opcheck.f64.view"})
      p.probe({{"kind", "opcheck"},
               {"name", std::string("opcheck.") + of},
               {"of", of},
               {"requires_grad", std::string(of) == "opcheck.f64.view"},
               {"test_utils", {"test_schema", "test_autograd_registration", "test_faketensor"}}});
  }
  if (has_check("mutation.declared") || has_check("epilogue.cpu"))
    for (const EpilogueCase& e : epilogue_cases()) {
      p.inputs[e.name + ".out"] = Tensor{"F32", {e.out.rows, e.out.cols}, e.out.v};
      p.inputs[e.name + ".bias"] = Tensor{"F32", {e.bias.cols}, e.bias.v};
      p.probe({{"kind", "epilogue"},
               {"name", e.name},
               {"op", "scale_bias_"},
               {"out", e.name + ".out"},
               {"bias", e.name + ".bias"},
               {"scale", e.scale},
               {"opcheck", e.name == "epilogue.0"}});
    }
}

std::vector<std::string> triton_kernels() {
  static const std::vector<std::string> names = [] {
    Session& s = Session::get();
    std::vector<std::string> found;
    // the judge's copy of the module (its size bounded when the build took it); none if the build refused it
    std::ifstream in(s.build().dir / "src" / (s.exercise.library + ".py"), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    // a decorator line @triton.jit (with arguments or not), then, skipping other decorators, `def NAME(`
    static const std::regex jit(
        R"(@triton\.jit\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\()");
    for (std::sregex_iterator it(text.begin(), text.end(), jit), end; it != end; ++it) found.push_back((*it)[1]);
    return found;
  }();
  return names;
}

const std::vector<EpilogueCase>& epilogue_cases() {
  static std::vector<EpilogueCase> cases = [] {
    auto rng = rng_for("mm16 epilogue");
    std::vector<EpilogueCase> out;
    const int64_t sizes[][2] = {{pick_not16(rng, 3, 40), pick_not16(rng, 3, 40)}, {16, 16}, {1, pick(rng, 2, 9)}};
    const double scales[] = {0.5, -1.25, 3};  // exact in float32: the expected values are exact products
    for (int i = 0; i < 4; ++i) {
      const bool valid = i < 3;
      const int64_t M = valid ? sizes[i][0] : 4, N = valid ? sizes[i][1] : 5;
      EpilogueCase e{"epilogue." + std::to_string(i), random_matrix(M, N, rng),
                     random_matrix(1, valid ? N : N + 1, rng), valid ? scales[i] : 2, valid};
      out.push_back(std::move(e));
    }
    return out;
  }();
  return cases;
}

}  // namespace judge::mm16
