// Sema tests: name resolution and scopes, compile-time parameters and -D overrides, shape
// symbols, constant folding, literal adaptation and promotion, implicit conversions, the shape
// rules of tile operators, and error recovery.
#include "FrontendTestUtil.h"

#include "recommend/Recommender.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <map>

using namespace tlc;
using tlc::test::bodyOf;
using tlc::test::Frontend;
using tlc::test::kernelWith;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

// Extra run-time parameters of the kernels below, after kernelWith's A, B, C and scale.
const char *const kExtraParams = "D: f16[M, 4, 32], Bb: bf16[K, N], Ci: out i32[M], Cb: out bool[M]";

// Buffers every statement under test can use. The statement follows on line 11.
const char *const kPrelude = "A_s = shared f16[BM, BK];\n"   // line 5
                             "B_s = shared f16[BK, BN];\n"   // line 6
                             "C_f = fragment f32[BM, BN];\n" // line 7
                             "R_f = fragment f32[BM];\n"     // line 8
                             "X_f = fragment f32[BM, 16];\n" // line 9
                             "L_l = local f32[4];\n";        // line 10
constexpr unsigned kStmtLine = 11;

std::string withPrelude(llvm::StringRef stmts) {
  return kernelWith((kPrelude + stmts).str(), kExtraParams);
}

// "test.tl:L:C: error: " for the first occurrence of `at` in the statement text.
std::string locationOf(llvm::StringRef stmts, llvm::StringRef at) {
  size_t offset = stmts.find(at);
  REQUIRE(offset != std::string::npos);
  llvm::StringRef before = stmts.take_front(offset);
  size_t lineStart = before.rfind('\n');
  unsigned col = offset - (lineStart == std::string::npos ? 0 : lineStart + 1) + 1;
  return "test.tl:" + std::to_string(kStmtLine + before.count('\n')) + ":" +
         std::to_string(col) + ": error: ";
}

// The statements must pass Sema without any diagnostic.
void accepts(llvm::StringRef stmts) {
  Frontend fe(withPrelude(stmts));
  INFO(stmts.str() << "\n" << fe.messages());
  CHECK(fe.analyze());
  CHECK(fe.messages().empty());
}

// The statements must give exactly one error, `message`, at the first `at`.
void rejects(llvm::StringRef stmts, llvm::StringRef at, llvm::StringRef message) {
  Frontend fe(withPrelude(stmts));
  bool ok = fe.analyze();
  INFO(stmts.str() << "\n" << fe.messages());
  CHECK_FALSE(ok);
  CHECK(fe.errors() == 1);
  CHECK(fe.says(locationOf(stmts, at) + message.str()));
}

// A `let` of the first kernel's body, searched through nested blocks.
LetDecl *findLet(const std::vector<Stmt *> &stmts, llvm::StringRef name) {
  for (Stmt *s : stmts) {
    if (auto *l = dyn_cast<LetStmt>(s); l && l->decl->getName() == name)
      return l->decl;
    if (auto *b = dyn_cast<BlockStmt>(s))
      if (LetDecl *d = findLet(b->body, name))
        return d;
    if (auto *f = dyn_cast<ForStmt>(s))
      if (LetDecl *d = findLet(f->body->body, name))
        return d;
  }
  return nullptr;
}

LetDecl &let(Frontend &fe, llvm::StringRef name) {
  LetDecl *d = findLet(bodyOf(fe), name);
  REQUIRE(d);
  return *d;
}

int64_t letInt(Frontend &fe, llvm::StringRef name) {
  LetDecl &d = let(fe, name);
  REQUIRE(d.constant);
  REQUIRE(d.constant->isInt());
  return d.constant->getInt();
}

// Runs Sema on `stmts` (must succeed) and hands back the front end for inspection.
struct Analyzed {
  explicit Analyzed(llvm::StringRef stmts, std::vector<std::string> defines = {})
      : fe(withPrelude(stmts), std::move(defines)) {
    INFO(fe.messages());
    REQUIRE(fe.analyze());
  }
  std::string typeOf(llvm::StringRef name) { return let(fe, name).type.str(); }
  Frontend fe;
};

// A compile-time parameter of the first kernel.
CompileParamDecl &param(Frontend &fe, llvm::StringRef name) {
  std::vector<CompileParamDecl *> &params = fe.kernel().compileParams;
  auto it = llvm::find_if(params, [&](CompileParamDecl *p) { return p->getName() == name; });
  INFO("compile-time parameter " << name.str());
  REQUIRE(it != params.end());
  return **it;
}

} // namespace

// ------------------------------------------------------------------ names and scopes

TEST_CASE("names resolve to their declarations", "[sema]") {
  Frontend fe("const T0 = 4;\n" +
              withPrelude("let a = BM; let b = M; let c = bx; let d = scale; let e = T0;\n"
                          "for i in serial(2) { let f = i; }"));
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  auto declKind = [&](llvm::StringRef name) {
    auto *n = dyn_cast<NameExpr>(let(fe, name).init);
    REQUIRE(n);
    REQUIRE(n->decl);
    return n->decl->getKind();
  };
  CHECK(declKind("a") == Decl::DK_CompileParam);
  CHECK(declKind("b") == Decl::DK_ShapeSymbol);
  CHECK(declKind("c") == Decl::DK_BlockIndex);
  CHECK(declKind("d") == Decl::DK_TensorParam);
  CHECK(declKind("e") == Decl::DK_Const);
  CHECK(declKind("f") == Decl::DK_LoopVar);
}

TEST_CASE("no name may shadow another", "[sema]") {
  rejects("let BM = 1;", "BM", "redefinition of 'BM'");
  rejects("for scale in serial(2) { }", "scale", "redefinition of 'scale'");
  rejects("let q = 1; { let q = 2; }", "q = 2", "redefinition of 'q'");
  rejects("for i in serial(2) { for i in serial(2) { } }", "i in serial(2) { }",
          "redefinition of 'i'");
  Frontend fe(withPrelude("let x = 1;\nlet x = 2;"));
  CHECK_FALSE(fe.analyze());
  CHECK(fe.says("test.tl:12:5: error: redefinition of 'x'"));
  CHECK(fe.says("test.tl:11:5: note: 'x' was declared here as a let binding"));
  // Sibling scopes may reuse a name.
  accepts("{ let t = 1; } { let t = 2; }\nfor i in serial(2) { } for i in serial(3) { }");
  // Kernels have separate scopes; file-level constants are visible in both.
  Frontend two("const W = 2;\nkernel a<n = 1>() grid(W) threads(32) as (b) { let x = n; }\n"
               "kernel c<n = 2>() grid(W) threads(32) as (b) { let x = n; }");
  CHECK(two.analyze());
}

TEST_CASE("scopes end at the closing brace", "[sema]") {
  rejects("{ let y = 1; } let z = y;", "y;", "use of undeclared name 'y'");
  rejects("for i in serial(2) { } let z = i;", "i;", "use of undeclared name 'i'");
  rejects("if bx > 0 { let t = 1; } else { let u = t; }", "t; }", "use of undeclared name 't'");
}

TEST_CASE("undeclared names get a suggestion when one is close", "[sema]") {
  Frontend fe(withPrelude("let v = scal;"));
  CHECK_FALSE(fe.analyze());
  CHECK(fe.says("test.tl:11:9: error: use of undeclared name 'scal'"));
  CHECK(fe.says("hint: did you mean 'scale'?"));
  Frontend far(withPrelude("let v = zebra;"));
  CHECK_FALSE(far.analyze());
  CHECK(!far.says("did you mean"));
}

TEST_CASE("names used the wrong way", "[sema]") {
  rejects("let v = A;", "A;", "'A' is a tensor, not a scalar");
  rejects("let v = C_f;", "C_f", "'C_f' is a fragment buffer, not a scalar");
  rejects("let v = scale[0];", "scale", "'scale' is a scalar parameter and cannot be indexed");
  rejects("let v = BM(3);", "BM", "'BM' is a compile-time parameter, not a function");
  rejects("let v = A[0];", "A[0]", "'A' has 2 dimensions but 1 index was given");
  rejects("let v = A_s[64, 0];", "64", "index 64 is out of bounds for dimension 0 of 'A_s' (size 64)");
  rejects("for i in parallel(128) { L_l[i] = 0.0; }", "i] =",
          "parallel loop variable 'i' runs to 127 but dimension 0 of 'L_l' has size 4");
  rejects("let v = A[0:4, 0];", "A[0:4", "a region slice is only allowed as a tile operator argument");
  rejects("let v = \"s\";", "\"s\"", "strings are only allowed as the function name of call_extern");
  rejects("let f = (i, j) => [i];", "(i, j)",
          "a layout function is only allowed as the second argument of annotate_layout");
}

// ------------------------------------------------------------------ compile-time parameters

TEST_CASE("compile-time parameter defaults and types", "[sema][params]") {
  Frontend fe("kernel k<a = 128, b: int = 2, f: float = 1, g = 0.5, T: dtype = bf16,\n"
              "         flag: bool = true, p = full_col, e = a * 2>()\n"
              "  grid(1) threads(32) { }");
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  CHECK(param(fe, "a").constant->getInt() == 128);
  CHECK(param(fe, "a").type == Type::intLiteral());
  CHECK(param(fe, "a").source == CompileParamDecl::Source::Default);
  // An int default of a float parameter becomes a float.
  CHECK(param(fe, "f").type == Type::floatLiteral());
  REQUIRE(param(fe, "f").constant->isFloat());
  CHECK(param(fe, "f").constant->getFloat() == 1.0);
  CHECK(param(fe, "g").type == Type::floatLiteral());
  CHECK(param(fe, "T").constant->getDType() == DType::BF16);
  CHECK(param(fe, "flag").constant->getBool());
  CHECK(param(fe, "p").constant->getPolicy() == WarpPolicy::FullCol);
  // A default may use earlier parameters.
  CHECK(param(fe, "e").constant->getInt() == 256);
}

TEST_CASE("compile-time parameter errors", "[sema][params]") {
  auto one = [](const std::string &params, llvm::StringRef message) {
    Frontend fe("kernel k<" + params + ">() grid(1) threads(32) { }");
    INFO(params << "\n" << fe.messages());
    CHECK_FALSE(fe.analyze());
    CHECK(fe.says(message));
  };
  one("x: f16 = 1", "test.tl:1:13: error: compile-time parameters are int, float, bool or dtype, not 'f16'");
  one("a: int = 1.5", "test.tl:1:19: error: the default of 'a' has type float but the parameter is int");
  one("T: dtype = 3", "the default of 'T' has type int but the parameter is dtype");
  one("b: bool = 1", "the default of 'b' has type int but the parameter is bool");
  one("n: int", "test.tl:1:10: error: compile-time parameter 'n' has no value");
  one("c: dtype = auto", "'c' is a dtype parameter, but `auto` is only for int parameters");
  one("m = M", "use of undeclared name 'M'");
}

TEST_CASE("auto parameters", "[sema][params]") {
  Frontend fe("kernel k<bm = auto, bk: int = auto(32, 64)>() grid(1) threads(32) { }");
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  CHECK(param(fe, "bm").source == CompileParamDecl::Source::Auto);
  CHECK(!param(fe, "bm").constant);
  CHECK(param(fe, "bk").isAuto);
  CHECK(param(fe, "bk").autoCandidates.size() == 2);
  // -D settles an auto parameter.
  Frontend bound("kernel k<bm = auto>() grid(1) threads(32) { }", {"bm=64"});
  REQUIRE(bound.analyze());
  CHECK(param(bound, "bm").source == CompileParamDecl::Source::CommandLine);
  CHECK(param(bound, "bm").constant->getInt() == 64);
}

TEST_CASE("command-line -D overrides parameters, plain and kernel-qualified", "[sema][params]") {
  const std::string source = "const C0 = 5;\n"
                             "kernel k1<BM = 64, n: int, T: dtype = f16, flag = false, f = 1.5>()\n"
                             "  grid(1) threads(32) { let x = BM + C0; }\n"
                             "kernel k2<BM = 32, n = 1>() grid(1) threads(32) { let x = BM; }\n";
  Frontend fe(source, {"BM=16", "k2.BM=8", "n=3", "T=bf16", "flag=true", "f=2", "C0=7", "Q=1"});
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  CHECK(param(fe, "BM").constant->getInt() == 16);
  CHECK(param(fe, "BM").source == CompileParamDecl::Source::CommandLine);
  CHECK(param(fe, "n").constant->getInt() == 3);
  CHECK(param(fe, "T").constant->getDType() == DType::BF16);
  CHECK(param(fe, "flag").constant->getBool());
  CHECK(param(fe, "f").constant->getFloat() == 2.0);
  CHECK(fe.program().consts[0]->constant->getInt() == 7);
  CHECK(findLet(fe.kernel(0).body->body, "x")->constant->getInt() == 23);
  // The qualified option wins for its kernel, whatever the order on the command line.
  CHECK(findLet(fe.kernel(1).body->body, "x")->constant->getInt() == 8);
  // Options nothing used stay unused, so the driver can warn about them.
  for (const Define &d : fe.defines)
    CHECK(d.used == (d.name != "Q"));

  Frontend reversed(source, {"k2.BM=8", "BM=16", "n=3"});
  REQUIRE(reversed.analyze());
  CHECK(findLet(reversed.kernel(1).body->body, "x")->constant->getInt() == 8);
  // A qualified option for another kernel does not apply.
  Frontend other(source, {"k2.n=3"});
  CHECK_FALSE(other.analyze());
  CHECK(other.says("compile-time parameter 'n' has no value"));
}

TEST_CASE("malformed -D values are command-line errors", "[sema][params]") {
  const std::string source =
      "kernel k<BM = 64, T: dtype = f16, flag = false, f = 0.5>(A: f16[M]) grid(1) threads(32) { }";
  struct Case {
    const char *define, *message;
  };
  for (Case c : {Case{"BM=x", "tlc: error: -D BM=x: compile-time parameter 'BM' of kernel 'k' expects an integer"},
                 Case{"T=f99", "expects a dtype (f16, bf16, f32, ...)"},
                 Case{"flag=2", "expects true or false"},
                 Case{"f=abc", "expects a number"},
                 Case{"M=0", "tlc: error: -D M=0: shape symbols are i32 and must be in 1..2147483647"},
                 Case{"M=-4", "shape symbols are i32 and must be in 1..2147483647"}}) {
    Frontend fe(source, {c.define});
    INFO(c.define << "\n" << fe.messages());
    CHECK_FALSE(fe.analyze());
    CHECK(fe.says(c.message));
    CHECK(fe.errors() == 1);
  }
}

TEST_CASE("parseDefine", "[sema][params]") {
  std::optional<Define> plain = parseDefine("block_M=128");
  REQUIRE(plain);
  CHECK(plain->kernel.empty());
  CHECK(plain->name == "block_M");
  CHECK(plain->value == "128");
  std::optional<Define> qualified = parseDefine("gemm.dtype= bf16 ");
  REQUIRE(qualified);
  CHECK(qualified->kernel == "gemm");
  CHECK(qualified->name == "dtype");
  CHECK(qualified->value == "bf16");
  CHECK(parseDefine("x=a=b")->value == "a=b");
  for (const char *bad : {"", "x", "=1", "x=", "1x=2", "a.=1", "a b=1", "a.b.c=1"}) {
    INFO(bad);
    CHECK_FALSE(parseDefine(bad));
  }
}

// ------------------------------------------------------------------ shape symbols

TEST_CASE("shape symbols are dynamic unless bound with -D", "[sema][shapes]") {
  Analyzed dyn("let m = M * 2;");
  std::vector<ShapeSymbolDecl *> &syms = dyn.fe.kernel().shapeSymbols;
  REQUIRE(syms.size() == 3);
  CHECK(syms[0]->getName() == "M"); // in order of first appearance
  CHECK(syms[1]->getName() == "K");
  CHECK(syms[2]->getName() == "N");
  CHECK(!syms[0]->constant);
  CHECK(syms[0]->type == Type::index());
  CHECK(!let(dyn.fe, "m").constant);
  CHECK(dyn.typeOf("m") == "i32");
  CHECK(!dyn.fe.kernel().params[0]->shape.constDim(0));

  Analyzed bound("let m = M * 2;", {"M=1024"});
  CHECK(bound.fe.kernel().shapeSymbols[0]->constant->getInt() == 1024);
  CHECK(letInt(bound.fe, "m") == 2048);
  CHECK(bound.fe.kernel().params[0]->shape.constDim(0) == 1024);
  CHECK(bound.fe.kernel().params[0]->shape.str() == "[1024, K]");
  // A kernel-qualified binding works for shape symbols too.
  Analyzed qualified("let m = M;", {"k.M=8"});
  CHECK(letInt(qualified.fe, "m") == 8);
}

TEST_CASE("tensor dimensions may be parameters and expressions", "[sema][shapes]") {
  Frontend fe("kernel k<BM = 64>(A: f16[BM, K], B: f16[K / 2, 3]) grid(1) threads(32) { }");
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  // BM is a parameter, not a new shape symbol.
  REQUIRE(fe.kernel().shapeSymbols.size() == 1);
  CHECK(fe.kernel().shapeSymbols[0]->getName() == "K");
  CHECK(fe.kernel().params[0]->shape.constDim(0) == 64);
  CHECK(fe.kernel().params[1]->shape.str() == "[K / 2, 3]");
  Frontend zero("kernel k(A: f16[0]) grid(1) threads(32) { }");
  CHECK_FALSE(zero.analyze());
  CHECK(zero.says("test.tl:1:17: error: tensor dimension must be positive, got 0"));
}

// ------------------------------------------------------------------ constants and typing

TEST_CASE("constant folding through declarations", "[sema][fold]") {
  Frontend fe("const A0 = ceildiv(100, 32);\nconst B0 = -7 / 2;\nconst C0 = -7 % 3;\n"
              "const D0 = 1 << 10 >> 2;\nconst E0 = i32(3.9) + u8(300);\nconst F0 = (A0 + 1) * 2;\n"
              "const G0: float = 2;\nconst H0 = max(A0, 9) - min(-1, 0);\nconst I0 = A0 > 3 && !false;\n");
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  auto value = [&](size_t i) { return fe.program().consts.at(i)->constant; };
  CHECK(value(0)->getInt() == 4);
  CHECK(value(1)->getInt() == -4);
  CHECK(value(2)->getInt() == 2);
  CHECK(value(3)->getInt() == 256);
  CHECK(value(4)->getInt() == 3 + 44);
  CHECK(value(5)->getInt() == 10);
  CHECK(value(6)->getFloat() == 2.0);
  CHECK(fe.program().consts[6]->type == Type::floatLiteral());
  CHECK(value(7)->getInt() == 10);
  CHECK(value(8)->getBool());
}

TEST_CASE("constant folding errors", "[sema][fold]") {
  rejects("let v = bx / 0;", "0;", "division by zero");
  rejects("let v = bx % 0;", "0;", "division by zero");
  rejects("let v = 1 << 64;", "64", "shift amount 64 is out of range [0, 63] in a constant expression");
  rejects("let v = 9223372036854775807 + 1;", "1;", "integer overflow in a constant expression");
  rejects("let v = ceildiv(BM, 0);", "ceildiv", "ceildiv by zero in a constant expression");
  Frontend notConst("const Z = 1;\nkernel k(A: f16[M]) grid(1) threads(32) { }\nconst D: int = 1.5;");
  CHECK_FALSE(notConst.analyze());
  CHECK(notConst.says("test.tl:3:16: error: const 'D' is declared int but its value has type float"));
}

TEST_CASE("literals adapt to the other operand", "[sema][types]") {
  Analyzed a("let i = 1; let f = 1.5; let g = 1 + 2.5; let s = scale * 2;\n"
             "let h = A[0, 0] * 2; let hh = A[0, 0] * 0.5; let t: f16 = 1; let u = t * 3;\n"
             "let c = Ci[0] + 1; let cf = Ci[0] * 0.5; let sh = bx << 2;");
  CHECK(a.typeOf("i") == "i32");
  CHECK(a.typeOf("f") == "f32");
  CHECK(a.typeOf("g") == "f32");
  CHECK(a.typeOf("s") == "f32");
  CHECK(a.typeOf("h") == "f16");
  CHECK(a.typeOf("hh") == "f16");
  CHECK(a.typeOf("t") == "f16");
  CHECK(a.typeOf("u") == "f16");
  CHECK(a.typeOf("c") == "i32");
  CHECK(a.typeOf("cf") == "f32"); // a float literal does not fit an integer
  CHECK(a.typeOf("sh") == "i32");
  CHECK(let(a.fe, "g").constant->getFloat() == 3.5);
}

TEST_CASE("mixed operand types promote", "[sema][types]") {
  Analyzed a("let x = A[0, 0] + Bb[0, 0]; let y = Ci[0] + A[0, 0]; let z = f16(1) * scale;\n"
             "let w = max(Ci[0], A[0, 0]); let v = select(bx > 0, A[0, 0], 1.0);\n"
             "let e = exp2(3); let c = ceildiv(M, 64); let r = abs(bf16(scale));");
  CHECK(a.typeOf("x") == "f32"); // f16 + bf16
  CHECK(a.typeOf("y") == "f16");
  CHECK(a.typeOf("z") == "f32");
  CHECK(a.typeOf("w") == "f16");
  CHECK(a.typeOf("v") == "f16");
  CHECK(a.typeOf("e") == "f32");
  CHECK(let(a.fe, "e").constant->getFloat() == 8.0);
  CHECK(a.typeOf("c") == "i32");
  CHECK(a.typeOf("r") == "bf16");
}

TEST_CASE("packed i4/u4 elements read as the byte-wide integer of their sign", "[sema][types]") {
  Frontend fe(kernelWith("S_s = shared u4[4, 8];\n"
                         "for i in parallel(4) { let q = Q[i, 1]; let s = S_s[i, 3]; let w = Q[i, 0] * 2; }",
                         "Q: i4[M, 64]"));
  INFO(fe.messages());
  REQUIRE(fe.analyze());
  CHECK(let(fe, "q").type.str() == "i8");
  CHECK(let(fe, "s").type.str() == "u8");
  CHECK(let(fe, "w").type.str() == "i8");
  CHECK(isPacked(DType::I4));
  CHECK(isPacked(DType::U4));
  CHECK_FALSE(isPacked(DType::U8));
}

TEST_CASE("implicit conversions", "[sema][types]") {
  // Any numeric value stores into any numeric buffer.
  accepts("for i in parallel(4) { L_l[i] = A[i, 0]; Ci[i] = scale; C[i, 0] = Ci[i]; }");
  accepts("let t: i32 = 2.5; let u: f16 = scale; Cb[0] = bool(scale); Cb[1] = bx > 0;");
  // bool and numbers never mix implicitly.
  rejects("C_f[0, 0] = true;", "true", "cannot implicitly convert bool to f32 for an element of 'C_f'");
  rejects("Cb[0] = scale;", "scale", "cannot implicitly convert f32 to bool");
  rejects("let g: bool = 1;", "1;", "cannot implicitly convert int to bool for let binding 'g'");
  rejects("if scale { }", "scale", "an if condition must be bool, got f32");
  rejects("let v = A_s[0, 1.5];", "1.5", "an index must be an integer, got float");
  rejects("let v = bx && by;", "&&", "operator '&&' needs bool operands, got i32 and i32");
  rejects("let v = scale % 2;", "%", "operator '%' needs integer operands, got f32 and int");
  rejects("let v = scale << 1;", "<<", "operator '<<' needs integer operands");
  rejects("let v = (bx > 0) + 1;", "+", "operator '+' needs numeric operands, got bool and int");
  rejects("let v = (bx > 0) < true;", "<", "operator '<' needs numeric operands");
  rejects("let v = !scale;", "!scale", "'!' needs a bool, got f32");
  rejects("let v = ~scale;", "~scale", "'~' needs an integer, got f32");
  rejects("let v = -(bx > 0);", "-(", "unary '-' needs a number, got bool");
  rejects("Cb[0] += true;", "Cb", "compound assignment '+=' needs numeric operands");
  accepts("let b = (bx > 0) == (by > 0); let n = !(bx != 1) || b;");
}

TEST_CASE("scalar builtins and casts", "[sema]") {
  // acc_t is a dtype parameter: calling it is a cast.
  accepts("let a = acc_t(scale); let b = inf(f16); let c = sqrt(2.0); let d = min(bx, 3);");
  rejects("let v = ceildiv(scale, 2);", "scale", "an argument of ceildiv must be an integer, got f32");
  rejects("let v = max(1);", "max", "'max' takes 2 arguments, got 1");
  rejects("let v = inf(i32);", "i32)", "i32 has no infinity");
  rejects("let v = exp(bx);", "bx", "'exp' needs a floating-point argument, got i32");
  rejects("let v = expp(scale);", "expp", "unknown function 'expp'");
  rejects("let v = f16(1, 2);", "f16", "a cast to f16 takes exactly one argument");
  rejects("let v = max(1, b = 2);", "b =", "'max' takes no keyword arguments");
  rejects("let v = select(bx > 0, 1, bx > 1);", "select", "select's branches have incompatible types int and bool");
  rejects("let v = copy(A_s, B_s);", "copy", "'copy' is a tile operator and has no value");
  rejects("exp2(scale);", "exp2", "the result of 'exp2(...)' is unused");
}

// ------------------------------------------------------------------ statements

TEST_CASE("assignment targets", "[sema]") {
  rejects("A[0, 0] = 1.0;", "A[", "cannot write to 'A': it is not declared `out`");
  rejects("let x = 1; x = 2;", "x = 2", "cannot assign to 'x': it is a let binding");
  rejects("A_s = 1.0;", "A_s", "cannot assign to the whole buffer 'A_s'");
  rejects("nope = 1.0;", "nope", "assignment to undeclared name 'nope'");
  rejects("BM = 1;", "BM", "cannot assign to 'BM': it is a compile-time parameter");
  accepts("C[0, 0] = 1.0; L_l[0] += 1; L_l[1] -= scale; L_l[2] *= 2; L_l[3] /= 2.0;");
}

TEST_CASE("loops", "[sema]") {
  Analyzed a("for k in pipelined(ceildiv(K, BK)) { }\nfor k in pipelined(8, stages = 4) { }\n"
             "for k in serial(2, 8) { }");
  auto loop = [&](size_t i) { return cast<ForStmt>(bodyOf(a.fe).at(6 + i)); };
  CHECK(loop(0)->stages == 2); // double buffering by default
  CHECK(loop(1)->stages == 4);
  REQUIRE(loop(2)->start);
  CHECK(toSource(loop(2)->start) == "2");
  REQUIRE(loop(2)->extents.size() == 1);
  CHECK(toSource(loop(2)->extents[0]) == "8");

  rejects("for i in parallel(4) { for j in parallel(4) { } }", "parallel(4) { }",
          "parallel loops cannot be nested");
  rejects("for i in parallel(4) { for j in serial(4) { } }", "serial",
          "a serial loop cannot appear inside a parallel loop");
  rejects("for i in parallel(4) { clear(C_f); }", "clear",
          "tile operator 'clear' cannot be used inside a parallel loop");
  rejects("for k in pipelined(4, stages = 9) { }", "9", "pipeline stages must be between 1 and 8, got 9");
  rejects("for k in pipelined(4, stages = M) { }", "M)",
          "the number of pipeline stages must be a compile-time constant");
  rejects("for k in serial(4, stages = 2) { }", "stages", "unknown option 'stages' for a serial loop");
  rejects("for k in vectorized(M) { }", "M)", "the extent of a vectorized loop must be a compile-time constant");
  rejects("for i, j in parallel(4) { }", "parallel", "parallel loop binds 2 variables but has 1 extent");
  rejects("for i, j in serial(4) { }", "j in", "a serial loop binds exactly one variable");
  rejects("for k in serial(1, 2, 3) { }", "serial", "serial takes a trip count or a range");
  rejects("for k in serial(scale) { }", "scale", "a loop bound must be an integer, got f32");
  rejects("for i in parallel(0) { }", "0)", "parallel loop extent must be positive, got 0");
}

TEST_CASE("allocations", "[sema]") {
  Analyzed a("T_s = shared acc_t[BM / 2, 3];");
  auto *t = cast<AllocStmt>(bodyOf(a.fe).at(6))->buffer;
  CHECK(t->elemType == DType::F32);
  CHECK(t->shape.str() == "[32, 3]");
  rejects("T_s = shared f16[M];", "M]", "the shape of shared buffer 'T_s' must be a compile-time constant");
  rejects("T_s = shared f16[0];", "0]", "buffer dimension must be positive, got 0");
  rejects("T_s = shared bogus[4];", "bogus", "unknown element type 'bogus'");
  rejects("T_s = shared BM[4];", "BM[", "'BM' is a compile-time parameter of type int, not a dtype");
  rejects("for k in serial(4) { T_s = shared f16[4]; }", "T_s",
          "buffers must be allocated at the top level of the kernel body");
}

TEST_CASE("kernel launch configuration", "[sema]") {
  auto one = [](const std::string &source, llvm::StringRef message) {
    Frontend fe(source);
    INFO(source << "\n" << fe.messages());
    CHECK_FALSE(fe.analyze());
    CHECK(fe.errors() == 1);
    CHECK(fe.says(message));
  };
  one("kernel k(A: f16[M]) grid(1) threads(M) { }",
      "test.tl:1:37: error: threads(...) must be a compile-time constant");
  one("kernel k() grid(1) threads(100) { }", "threads(100) is not a multiple of the warp size (32)");
  one("kernel k() grid(1) threads(2048) { }", "threads(2048) is outside the range 1..1024");
  one("kernel k() grid(1, 1, 1, 1) threads(32) { }", "grid takes 1 to 3 dimensions, got 4");
  one("kernel k() grid(1) threads(32) as (a, b) { }",
      "test.tl:1:39: error: the grid has 1 dimension but 2 block indices are bound");
  one("kernel k() grid(1.5) threads(32) { }", "a grid dimension must be an integer, got float");
  one("kernel k() grid(1) threads(32) { }\nkernel k() grid(1) threads(32) { }",
      "test.tl:2:8: error: redefinition of kernel 'k'");
  one("kernel k(s: out f32) grid(1) threads(32) { }", "scalar parameter 's' cannot be `out`");
  Frontend fe("kernel k<t = 4>() grid(2, 3) threads(t * 32) as (x, y) { }");
  REQUIRE(fe.analyze());
  CHECK(fe.kernel().numThreads == 128);
}

// ------------------------------------------------------------------ tile operators

TEST_CASE("copy regions", "[sema][tileops]") {
  accepts("copy(A[by * BM, 0], A_s);");
  accepts("copy(A[by * 64 : by * 64 + 64, 0:32], A_s);");
  accepts("copy(A[by * BM : (by + 1) * BM, :BK], A_s);");
  accepts("for k in serial(4) { copy(A[by * BM : by * BM + BM, k * BK : k * BK + BK], A_s); }");
  accepts("copy(D[by * 64 : by * 64 + 64, 2, :], A_s);"); // the point dimension is squeezed
  accepts("copy(C_f, C[by * BM, bx * BN]);");
  accepts("copy(A[by * BM, 0], R_f);"); // a 1-d tile aligns with the last dimension
  rejects("copy(A[by * 64 : by * 64 + 32, 0:32], A_s);", "copy",
          "copy shapes do not match: source 'A' is 32x32 but destination 'A_s' is 64x32");
  rejects("copy(A[0, 0], C[0, 0]);", "copy",
          "copy needs the tile extent from one side, but both 'A' and 'C' are given by origin only");
  rejects("copy(D[0, 2, 0], A_s);", "2, 0]", "the 64x32 tile at 2 runs past dimension 1 of 'D' (size 4)");
  rejects("copy(A_s, A_s);", "copy", "copy from 'A_s' to itself");
  rejects("copy(A[4:4, 0:32], A_s);", "4:4", "empty region: slice 0 of 'A' has extent 0");
  rejects("copy(Cb[0:64], R_f);", "copy", "copy cannot convert between bool and f32");
  rejects("copy(scale, A_s);", "scale", "copy's src must be a buffer or a region of one, got a f32");
  rejects("copy(A_s, A[0, 0]);", "A[0, 0]", "cannot write to 'A': it is not declared `out`");
  rejects("copy(A_s);", "copy", "copy is missing its 'dst' argument");
}

TEST_CASE("linear forms of region bounds", "[sema][tileops]") {
  Analyzed a("for k in serial(4) {\n"
             "let e1 = (by + 1) * BM - by * BM; let e2 = k * BK + BK; let e3 = 2 * (by - bx) + bx;\n"
             "let e4 = by * by; let e5 = -k + 3; let e6 = k / 2;\n"
             "let e7 = k / 2 * 8 + 64; let e8 = k/2*8; let e9 = (k + 1) / 2 * 8; }");
  auto init = [&](llvm::StringRef n) { return let(a.fe, n).init; };
  CHECK(constantDifference(init("e1"), nullptr) == 64);
  CHECK(constantDifference(init("e2"), cast<BinaryExpr>(init("e2"))->lhs) == 32);
  std::optional<LinearForm> f3 = linearize(init("e3"));
  REQUIRE(f3);
  CHECK(f3->constant == 0);
  REQUIRE(f3->terms.size() == 2);
  std::map<std::string, int64_t> coeffs;
  for (auto &[atom, c] : f3->terms)
    coeffs[std::get<const Decl *>(atom)->getName().str()] = c;
  CHECK(coeffs == std::map<std::string, int64_t>{{"bx", -1}, {"by", 2}});
  std::optional<LinearForm> f5 = linearize(init("e5"));
  REQUIRE(f5);
  CHECK(f5->constant == 3);
  CHECK(f5->terms.at(0).second == -1);
  CHECK(!constantDifference(init("e5"), init("e2")));
  // A product of variables, a division: one atom each, keyed by its printed text (spacing
  // does not matter), so that slices `k / 2 * 8 : k / 2 * 8 + 64` span 64.
  std::optional<LinearForm> f4 = linearize(init("e4"));
  REQUIRE(f4);
  REQUIRE(f4->terms.size() == 1);
  CHECK(std::get<std::string>(f4->terms[0].first) == "by * by");
  std::optional<LinearForm> f6 = linearize(init("e6"));
  REQUIRE(f6);
  CHECK(std::get<std::string>(f6->terms[0].first) == "k / 2");
  CHECK(constantDifference(init("e7"), init("e8")) == 64);
  CHECK(!constantDifference(init("e9"), init("e8"))); // (k + 1) / 2 is another atom
  CHECK(multipleOf(init("e8"), 8));
  CHECK(!multipleOf(init("e6"), 2));
}

TEST_CASE("gemm", "[sema][tileops]") {
  accepts("gemm(A_s, B_s, C_f);");
  accepts("gemm(A_s, B_s, C_f, transpose_A = false, policy = full_col, clear_accum = true);");
  accepts("T_s = shared f16[BN, BK];\ngemm(A_s, T_s, C_f, transpose_B = true);");
  accepts("T_s = shared f16[BK, BM];\ngemm(T_s, B_s, C_f, transpose_A = true);");
  accepts("I_s = shared i8[64, 32]; J_s = shared i8[32, 64]; K_f = fragment i32[64, 64];\n"
          "gemm(I_s, J_s, K_f);");
  rejects("gemm(A_s, A_s, C_f);", "gemm", "gemm K mismatch: A has K = 32 but B has K = 64");
  rejects("T_f = fragment f32[32, 64];\ngemm(A_s, B_s, T_f);", "gemm",
          "gemm M mismatch: A has M = 64 but C has 32 rows");
  rejects("gemm(A, B_s, C_f);", "A,", "gemm's A must be a whole shared or fragment buffer");
  rejects("gemm(A_s, B_s, A_s);", "A_s);", "gemm's C must be a fragment buffer, but 'A_s' is shared");
  rejects("gemm(A_s, B_s, C_f, transpose_A = 1);", "1)", "'transpose_A' of gemm must be bool, got int");
  rejects("gemm(A_s, B_s, C_f, policy = 2);", "2)", "'policy' of gemm must be a warp policy, got int");
  rejects("gemm(A_s, B_s, C_f, transpose_b = true);", "transpose_b", "unknown argument 'transpose_b' for gemm");
  rejects("gemm(A_s, B_s, C_f, policy = full_row, policy = square);", "policy = square",
          "argument 'policy' of gemm is given twice");
  rejects("gemm(A_s, B_s);", "gemm", "gemm is missing its 'C' argument");
  rejects("T_s = shared bf16[BK, BN];\ngemm(A_s, T_s, C_f);", "gemm", "gemm inputs have different dtypes");
  rejects("T_f = fragment f16[BM, BN]; U_s = shared bf16[BM, BK]; V_s = shared bf16[BK, BN];\n"
          "gemm(U_s, V_s, T_f);", "T_f);", "gemm accumulator 'T_f' is f16");

  Frontend hint(withPrelude("gemm(A_s, A_s, C_f);"));
  CHECK_FALSE(hint.analyze());
  CHECK(hint.says("transpose_B = true"));
}

TEST_CASE("reductions", "[sema][tileops]") {
  accepts("reduce_sum(C_f, R_f);"); // the last dimension by default
  accepts("reduce_max(X_f, R_f, dim = 1, clear = false);");
  accepts("reduce_min(C_f, R_f, dim = -1);");
  accepts("T_f = fragment f32[BM, 1];\nreduce_absmax(C_f, T_f, dim = 1);"); // kept as extent 1
  accepts("T_f = fragment f32[16];\nreduce_abssum(X_f, T_f, dim = 0);");
  rejects("reduce_sum(X_f, R_f, dim = 0);", "reduce_sum",
          "reduce_sum over dim 0 of 'X_f' [64, 16] gives [16], but 'R_f' is [64]");
  rejects("reduce_max(C_f, R_f, dim = 2);", "2)",
          "reduce_max dim 2 is out of range for 'C_f' [64, 64] (valid: -2 to 1)");
  rejects("reduce_sum(A, R_f);", "A,", "reduce_sum's src must be a whole fragment or shared or local buffer");
  rejects("reduce_sum(C_f, R_f, dim = bx);", "bx)", "'dim' of reduce_sum must be a compile-time constant");
}

TEST_CASE("other tile operators", "[sema][tileops]") {
  accepts("fill(C_f, 0); fill(C_f[0:32, :], 1.5); clear(A_s); cumsum(C_f, C_f, dim = 1, reverse = true);");
  accepts("atomic_add(C[0, 0], C_f); atomic_add(C[bx, by], 1.0);");
  accepts("annotate_layout(A_s, (i, j) => [i, j ^ (i % 8)]);\nswizzle_blocks(8);");
  accepts("barrier_arrive(1); barrier_wait(15);");
  accepts("let r = call_extern(\"f\", scale, 1, returns = f32); call_extern(\"g\");");
  rejects("fill(C_f, true);", "true", "cannot implicitly convert bool to f32 for fill's value");
  rejects("fill(C_f[0, 0], 1.0);", "C_f[", "fill needs a whole buffer or a sliced region, not an origin");
  rejects("atomic_add(L_l, R_f);", "L_l", "atomic_add's destination must be global or shared memory, but 'L_l' is local");
  rejects("annotate_layout(A_s, (i) => [i]);", "(i)", "the layout function takes 1 index but 'A_s' has 2 dimensions");
  rejects("annotate_layout(A_s, 3);", "3)", "annotate_layout's layout must be a layout function");
  rejects("barrier_arrive(0);", "0)", "barrier id must be between 1 and 15, got 0");
  rejects("for k in serial(2) { swizzle_blocks(4); }", "swizzle_blocks",
          "swizzle_blocks reorders the whole grid and must be at the top level");
  rejects("call_extern(scale);", "scale", "call_extern's first argument must be the function name as a string");
  rejects("clear(C_f, C_f);", "C_f);", "clear takes 1 positional argument");
}

// ------------------------------------------------------------------ error recovery

TEST_CASE("one undeclared name gives one error", "[sema][recovery]") {
  // Everything that depends on `w` is silent: it has the error type.
  rejects("let w = nope + 1;\nlet z = w * 2 + f16(w);\nfor i, j in parallel(4, 4) { C_f[i, j] = z; }\n"
          "for q in serial(w) { }\nif w > 2 { }\nfill(C_f, w);",
          "nope", "use of undeclared name 'nope'");
  rejects("T_s = shared bogus[4, 4];\ncopy(T_s, C[0, 0]);\ngemm(T_s, T_s, C_f);", "bogus",
          "unknown element type 'bogus'");
  rejects("T_f = fragment f32[4, nope];\ncopy(T_f, C[0, 0]);", "nope", "use of undeclared name 'nope'");
}

TEST_CASE("independent errors are all reported", "[sema][recovery]") {
  Frontend fe(withPrelude("let a = nope;\nC_f[0, 0] = true;\nfor i in serial(scale) { }\n"
                          "copy(A_s, A[0, 0]);\ngemm(A_s, A_s, C_f);\nlet a2 = 1 << 64;"));
  CHECK_FALSE(fe.analyze());
  INFO(fe.messages());
  CHECK(fe.errors() == 6);
  for (const char *at : {"test.tl:11:9: error: use of undeclared name 'nope'",
                         "test.tl:12:13: error: cannot implicitly convert bool to f32",
                         "test.tl:13:17: error: a loop bound must be an integer",
                         "test.tl:14:11: error: cannot write to 'A'",
                         "test.tl:15:1: error: gemm K mismatch",
                         "test.tl:16:15: error: shift amount 64 is out of range"})
    CHECK(fe.says(at));
}

TEST_CASE("errors in one kernel do not stop the next", "[sema][recovery]") {
  Frontend fe("kernel a() grid(1) threads(32) { let x = nope; }\n"
              "kernel b() grid(1) threads(33) { let y = 1; }\n"
              "kernel c() grid(1) threads(32) { let z = y; }\n");
  CHECK_FALSE(fe.analyze());
  CHECK(fe.errors() == 3);
  CHECK(fe.says("test.tl:1:42: error: use of undeclared name 'nope'"));
  CHECK(fe.says("test.tl:2:28: error: threads(33)"));
  CHECK(fe.says("test.tl:3:42: error: use of undeclared name 'y'"));
}

// `auto` knobs are filled by the recommender before Sema (driver/AutoParams.cpp): the same
// here, as -D options, for every kernel that has them.
static std::vector<std::string> autoChoices(llvm::StringRef source, llvm::StringRef path) {
  Frontend parsed(source);
  if (!parsed.parse())
    return {};
  std::vector<std::string> defines;
  for (const KernelDecl *k : parsed.program().kernels) {
    if (!llvm::any_of(k->compileParams, [](const CompileParamDecl *p) { return p->isAuto; }))
      continue;
    recommend::RecommendOptions opts;
    opts.kernel = k->name;
    opts.onlyAuto = true;
    auto r = recommend::rank(source, path, opts, *tlc::target::resolveTarget("sm_90a"));
    if (!r || r->ranked.empty()) {
      llvm::consumeError(r.takeError());
      continue;
    }
    for (const recommend::Binding &b : r->ranked.front().config)
      defines.push_back(k->name + "." + b.name + "=" + b.value);
  }
  return defines;
}

TEST_CASE("the sample kernels pass Sema", "[sema][samples]") {
  std::error_code ec;
  unsigned samples = 0;
  for (llvm::sys::fs::directory_iterator it(std::string(TLC_SOURCE_DIR) + "/samples", ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!llvm::StringRef(it->path()).endswith(".tl"))
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    REQUIRE(buffer);
    Frontend fe((*buffer)->getBuffer(), autoChoices((*buffer)->getBuffer(), it->path()));
    INFO(it->path() << "\n" << fe.messages());
    CHECK(fe.analyze());
    CHECK(!fe.program().kernels.empty());
    ++samples;
  }
  CHECK(samples >= 6);
}
