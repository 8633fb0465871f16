// Parser and AST builder tests: operator precedence and associativity, every statement and
// loop kind, regions, lambdas, keyword arguments, compile-time parameter forms, trailing
// commas, syntax-error positions, and robustness on random input.
#include "FrontendTestUtil.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tlc;
using tlc::test::bodyOf;
using tlc::test::Frontend;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

// Fully parenthesised prefix form of an expression, so that tests see the tree shape.
std::string sexpr(const Expr *e) {
  if (!e)
    return "_";
  switch (e->getKind()) {
  case Expr::EK_Unary: {
    auto *u = cast<UnaryExpr>(e);
    return "(" + spelling(u->op).str() + " " + sexpr(u->operand) + ")";
  }
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
    return "(" + spelling(b->op).str() + " " + sexpr(b->lhs) + " " + sexpr(b->rhs) + ")";
  }
  case Expr::EK_Index: {
    auto *ix = cast<IndexExpr>(e);
    std::string s = ix->base->name + "[";
    for (size_t i = 0; i < ix->indices.size(); ++i) {
      const IndexItem &item = ix->indices[i];
      s += (i ? " " : "") +
           (item.isSlice ? sexpr(item.lo) + ":" + sexpr(item.hi) : sexpr(item.lo));
    }
    return s + "]";
  }
  case Expr::EK_Call: {
    auto *c = cast<CallExpr>(e);
    std::string s = "(call " + c->callee;
    for (const CallArg &a : c->args)
      s += " " + (a.keyword.empty() ? "" : a.keyword + "=") + sexpr(a.value);
    return s + ")";
  }
  case Expr::EK_Lambda: {
    auto *l = cast<LambdaExpr>(e);
    std::string s = "(lambda";
    for (SimpleDecl *p : l->params)
      s += " " + p->getName().str();
    s += " ->";
    for (Expr *r : l->results)
      s += " " + sexpr(r);
    return s + ")";
  }
  default:
    return toSource(e);
  }
}

// Parses `const X = <text>;` and returns the initializer.
const Expr *parseExpr(Frontend &fe) {
  INFO(fe.messages());
  REQUIRE(fe.parse());
  REQUIRE(fe.program().consts.size() == 1);
  return fe.program().consts[0]->init;
}

std::string shape(llvm::StringRef text) {
  Frontend fe(("const X = " + text + ";").str());
  return sexpr(parseExpr(fe));
}

std::string kernelSource(llvm::StringRef body) {
  return "kernel k(A: f16[M, K, N], C: out f32[M, N]) grid(4, 4) threads(128) as (bx, by) {\n" +
         body.str() + "\n}\n";
}

// Parses a kernel around `body`; requires success.
struct ParsedKernel {
  explicit ParsedKernel(llvm::StringRef body) : fe(kernelSource(body)) {
    INFO(fe.messages());
    REQUIRE(fe.parse());
  }
  std::vector<Stmt *> &stmts() { return bodyOf(fe); }
  Frontend fe;
};

} // namespace

TEST_CASE("binary operators are left-associative", "[parser]") {
  CHECK(shape("a - b - c") == "(- (- a b) c)");
  CHECK(shape("a / b % c") == "(% (/ a b) c)");
  CHECK(shape("a >> b >> c") == "(>> (>> a b) c)");
  CHECK(shape("a || b || c") == "(|| (|| a b) c)");
  CHECK(shape("a - (b - c)") == "(- a (- b c))");
}

TEST_CASE("operator precedence follows the grammar", "[parser]") {
  CHECK(shape("a + b * c") == "(+ a (* b c))");
  CHECK(shape("a * b + c") == "(+ (* a b) c)");
  CHECK(shape("-a * b") == "(* (- a) b)");
  CHECK(shape("a * -b") == "(* a (- b))");
  CHECK(shape("a << 1 + 2") == "(<< a (+ 1 2))");
  CHECK(shape("a < b << 1") == "(< a (<< b 1))");
  CHECK(shape("a < b == c >= d") == "(== (< a b) (>= c d))");
  // As in C, equality binds tighter than the bitwise operators.
  CHECK(shape("a & b == c") == "(& a (== b c))");
  CHECK(shape("a | b ^ c & d") == "(| a (^ b (& c d)))");
  CHECK(shape("a || b && c | d") == "(|| a (&& b (| c d)))");
  CHECK(shape("!a && b") == "(&& (! a) b)");
  CHECK(shape("--~a") == "(- (- (~ a)))");
  CHECK(shape("(a + b) * c") == "(* (+ a b) c)");
}

TEST_CASE("printing an expression keeps only the parentheses it needs", "[parser][ast]") {
  for (const char *text : {"a - (b - c)", "(a - b) - c", "(a + b) * c", "a + b * c", "-(a + b)",
                           "a & (b | c)", "(a << 1) + 2", "f16(x) * exp2(y - m)",
                           "A[i, j + 1] * 2", "a / (b / c)", "!(a && b) || c"}) {
    Frontend first(std::string("const X = ") + text + ";");
    const Expr *e = parseExpr(first);
    std::string printed = toSource(e);
    // Printing then re-parsing gives the same tree.
    Frontend second("const X = " + printed + ";");
    INFO(text << " printed as " << printed);
    CHECK(sexpr(parseExpr(second)) == sexpr(e));
  }
  CHECK(shape("(a - b) - c") == shape("a - b - c"));
  Frontend fe("const X = (a - b) - (c - d);");
  CHECK(toSource(parseExpr(fe)) == "a - b - (c - d)");
}

TEST_CASE("expression source ranges", "[parser][ast]") {
  Frontend fe("const X =\n  a  +  b * c;");
  const auto *add = dyn_cast<BinaryExpr>(parseExpr(fe));
  REQUIRE(add);
  CHECK(fe.lineCol(add->getRange().Start) == "2:3");
  CHECK(fe.lineCol(add->getRange().End) == "2:14"); // one past 'c'
  CHECK(fe.lineCol(add->opRange.Start) == "2:6");
  CHECK(fe.lineCol(add->rhs->getRange().Start) == "2:9");
}

TEST_CASE("every statement kind", "[parser]") {
  ParsedKernel k(R"(
    S = shared f16[64, 32];
    let x = 1;
    let y: f32 = 2.0;
    for i in serial(4) { }
    if x > 0 { }
    C[0, 0] = 1.0;
    C[0, 0] += 1.0;
    C[0, 0] -= 1.0;
    C[0, 0] *= 2.0;
    C[0, 0] /= 2.0;
    clear(S);
    { let z = 3; }
    ;
  )");
  std::vector<Stmt *> &s = k.stmts();
  REQUIRE(s.size() == 12); // the empty statement makes no node
  auto *alloc = dyn_cast<AllocStmt>(s[0]);
  REQUIRE(alloc);
  CHECK(alloc->buffer->getName() == "S");
  CHECK(alloc->buffer->scope == Scope::Shared);
  CHECK(alloc->buffer->elemTypeName == "f16");
  CHECK(alloc->buffer->shape.rank() == 2);

  auto *let = dyn_cast<LetStmt>(s[1]);
  REQUIRE(let);
  CHECK(!let->decl->declaredType);
  auto *typedLet = dyn_cast<LetStmt>(s[2]);
  REQUIRE(typedLet);
  CHECK(typedLet->decl->declaredType == DType::F32);

  CHECK(isa<ForStmt>(s[3]));
  CHECK(isa<IfStmt>(s[4]));
  std::vector<AssignOp> ops;
  for (size_t i = 5; i < 10; ++i) {
    auto *a = dyn_cast<AssignStmt>(s[i]);
    REQUIRE(a);
    CHECK(sexpr(a->target) == "C[0 0]");
    ops.push_back(a->op);
  }
  CHECK(ops == std::vector<AssignOp>{AssignOp::Assign, AssignOp::Add, AssignOp::Sub,
                                     AssignOp::Mul, AssignOp::Div});
  auto *call = dyn_cast<CallStmt>(s[10]);
  REQUIRE(call);
  CHECK(call->call->calleeKind == CalleeKind::TileOp);
  CHECK(call->call->builtin == Builtin::Clear);
  auto *block = dyn_cast<BlockStmt>(s[11]);
  REQUIRE(block);
  REQUIRE(block->body.size() == 1);
  CHECK(isa<LetStmt>(block->body[0]));
}

TEST_CASE("allocation scopes and element types", "[parser]") {
  ParsedKernel k("a = shared bf16[8];\nb = fragment f32[4, 4];\nc = local T[2];");
  auto scopeOf = [&](size_t i) { return cast<AllocStmt>(k.stmts()[i])->buffer->scope; };
  CHECK(scopeOf(0) == Scope::Shared);
  CHECK(scopeOf(1) == Scope::Fragment);
  CHECK(scopeOf(2) == Scope::Local);
  // A dtype parameter name is kept for Sema to resolve.
  CHECK(cast<AllocStmt>(k.stmts()[2])->buffer->elemTypeName == "T");
}

TEST_CASE("every loop kind", "[parser]") {
  ParsedKernel k(R"(
    for i, j in parallel(64, 32) { }
    for k in pipelined(n, stages = 3) { }
    for a in serial(8) { }
    for b in serial(2, 8) { }
    for c in unroll(4) { }
    for d in vectorized(8) { }
  )");
  std::vector<Stmt *> &s = k.stmts();
  REQUIRE(s.size() == 6);
  std::vector<LoopKind> kinds;
  for (Stmt *st : s)
    kinds.push_back(cast<ForStmt>(st)->loopKind);
  CHECK(kinds == std::vector<LoopKind>{LoopKind::Parallel, LoopKind::Pipelined, LoopKind::Serial,
                                       LoopKind::Serial, LoopKind::Unroll, LoopKind::Vectorized});
  auto *par = cast<ForStmt>(s[0]);
  REQUIRE(par->vars.size() == 2);
  CHECK(par->vars[0]->getName() == "i");
  CHECK(par->vars[1]->getName() == "j");
  CHECK(par->vars[1]->getKind() == Decl::DK_LoopVar);
  CHECK(par->args.size() == 2);
  auto *pipe = cast<ForStmt>(s[1]);
  REQUIRE(pipe->args.size() == 2);
  CHECK(pipe->args[0].keyword.empty());
  CHECK(pipe->args[1].keyword == "stages");
  CHECK(toSource(pipe->args[1].value) == "3");
  CHECK(cast<ForStmt>(s[3])->args.size() == 2);
  CHECK(k.fe.lineCol(pipe->kindRange.Start) == "4:14");
}

TEST_CASE("else-if chains nest in the else branch", "[parser]") {
  ParsedKernel k("if a { } else if b { let x = 1; } else if c { } else { let y = 2; }");
  auto *first = dyn_cast<IfStmt>(k.stmts().at(0));
  REQUIRE(first);
  CHECK(toSource(first->cond) == "a");
  auto *second = dyn_cast_or_null<IfStmt>(first->elseBody);
  REQUIRE(second);
  CHECK(toSource(second->cond) == "b");
  CHECK(second->thenBody->body.size() == 1);
  auto *third = dyn_cast_or_null<IfStmt>(second->elseBody);
  REQUIRE(third);
  auto *last = dyn_cast_or_null<BlockStmt>(third->elseBody);
  REQUIRE(last);
  CHECK(last->body.size() == 1);

  ParsedKernel noElse("if a { }");
  CHECK(cast<IfStmt>(noElse.stmts().at(0))->elseBody == nullptr);
}

TEST_CASE("region slices", "[parser]") {
  ParsedKernel k(R"(
    copy(A[i0:i1, :, j], X);
    copy(A[:k, k:, 0:64], X);
    copy(A[by * 64 : by * 64 + 64, 0, k], X);
  )");
  auto operand = [&](size_t i) { return cast<CallStmt>(k.stmts()[i])->call->args.at(0).value; };
  CHECK(sexpr(operand(0)) == "A[i0:i1 _:_ j]");
  CHECK(sexpr(operand(1)) == "A[_:k k:_ 0:64]");
  CHECK(sexpr(operand(2)) == "A[(* by 64):(+ (* by 64) 64) 0 k]");
  auto *ix = cast<IndexExpr>(operand(0));
  CHECK(ix->hasSlice());
  CHECK(ix->indices[1].isSlice);
  CHECK(!ix->indices[2].isSlice);
  CHECK(k.fe.lineCol(ix->indices[1].range.Start) == "3:19");
  CHECK(toSource(operand(1)) == "A[:k, k:, 0:64]");
  // A point-only index is not a slice.
  ParsedKernel point("copy(A[1, 2, 3], X);");
  CHECK(!cast<IndexExpr>(cast<CallStmt>(point.stmts()[0])->call->args[0].value)->hasSlice());
}

TEST_CASE("layout lambdas", "[parser]") {
  ParsedKernel k("annotate_layout(S, (i, j) => [i, j ^ (i % 8)]);");
  auto *call = cast<CallStmt>(k.stmts().at(0))->call;
  REQUIRE(call->args.size() == 2);
  auto *lambda = dyn_cast<LambdaExpr>(call->args[1].value);
  REQUIRE(lambda);
  CHECK(sexpr(lambda) == "(lambda i j -> i (^ j (% i 8)))");
  CHECK(lambda->params[0]->getKind() == Decl::DK_LambdaParam);
  CHECK(toSource(lambda) == "(i, j) => [i, j ^ i % 8]");
  // A single parameter still needs parentheses; a parenthesised name is just a name.
  ParsedKernel one("annotate_layout(S, (i) => [i]);");
  CHECK(isa<LambdaExpr>(cast<CallStmt>(one.stmts()[0])->call->args[1].value));
  ParsedKernel paren("let x = (i);");
  CHECK(isa<NameExpr>(cast<LetStmt>(paren.stmts()[0])->decl->init));
}

TEST_CASE("calls: keyword arguments, builtins, casts and named callees", "[parser]") {
  ParsedKernel k(R"(
    gemm(A_s, B_s, C_f, transpose_B = true, policy = full_row);
    let a = exp2(x - m);
    let b = f16(x);
    let c = acc_t(x);
    let d = max(ceildiv(n, 64), 1);
    let e = inf(f32);
  )");
  auto *gemm = cast<CallStmt>(k.stmts()[0])->call;
  CHECK(sexpr(gemm) == "(call gemm A_s B_s C_f transpose_B=true policy=full_row)");
  CHECK(gemm->positional().size() == 3);
  REQUIRE(gemm->keywordArg("policy"));
  CHECK(isa<PolicyRefExpr>(gemm->keywordArg("policy")->value));
  CHECK(!gemm->keywordArg("transpose_A"));
  CHECK(k.fe.lineCol(gemm->keywordArg("transpose_B")->keywordRange.Start) == "3:25");

  auto init = [&](size_t i) { return cast<CallExpr>(cast<LetStmt>(k.stmts()[i])->decl->init); };
  CHECK(init(1)->calleeKind == CalleeKind::Builtin);
  CHECK(init(1)->builtin == Builtin::Exp2);
  CHECK(init(2)->calleeKind == CalleeKind::Cast);
  CHECK(init(2)->castType == DType::F16);
  // A call of a plain name stays Named until Sema sees a dtype parameter.
  CHECK(init(3)->calleeKind == CalleeKind::Named);
  CHECK(init(4)->builtin == Builtin::Max);
  CHECK(cast<CallExpr>(init(4)->args[0].value)->builtin == Builtin::CeilDiv);
  CHECK(isa<DTypeRefExpr>(init(5)->args[0].value));
}

TEST_CASE("kernels may be named after tile operators and builtins", "[parser]") {
  Frontend fe("kernel gemm() grid(1) threads(32) { }\nkernel exp() grid(1) threads(32) { }\n"
              "kernel reduce_sum() grid(1) threads(32) { }");
  REQUIRE(fe.parse());
  REQUIRE(fe.program().kernels.size() == 3);
  CHECK(fe.kernel(0).name == "gemm");
  CHECK(fe.kernel(1).name == "exp");
  CHECK(fe.kernel(2).name == "reduce_sum");
  CHECK(fe.lineCol(fe.kernel(1).nameRange.Start) == "2:8");
  // ...but not after other keywords.
  Frontend bad("kernel for() grid(1) threads(32) { }");
  CHECK_FALSE(bad.parse());
  CHECK(bad.says("test.tl:1:8: error: unexpected 'for'"));
}

TEST_CASE("compile-time parameter forms", "[parser]") {
  Frontend fe("kernel k<a = 128, b: int = 2, T: dtype = f16, c = auto, d: int = auto(32, 64),\n"
              "         e: int, f: float = 0.5, g = (1 > 0), p = full_col,>()\n"
              "  grid(1) threads(32) { }");
  REQUIRE(fe.parse());
  std::vector<CompileParamDecl *> &p = fe.kernel().compileParams;
  REQUIRE(p.size() == 9);
  CHECK((p[0]->getName() == "a" && !p[0]->declaredType && toSource(p[0]->defaultValue) == "128"));
  CHECK((p[1]->declaredType == std::string("int") && toSource(p[1]->defaultValue) == "2"));
  CHECK(p[2]->declaredType == std::string("dtype"));
  CHECK(isa<DTypeRefExpr>(p[2]->defaultValue));
  CHECK((p[3]->isAuto && p[3]->autoCandidates.empty() && !p[3]->defaultValue));
  CHECK(p[4]->isAuto);
  REQUIRE(p[4]->autoCandidates.size() == 2);
  CHECK(toSource(p[4]->autoCandidates[1]) == "64");
  CHECK(fe.lineCol(p[4]->autoRange.Start) == "1:66");
  // Required: a type and no default.
  CHECK((p[5]->declaredType == std::string("int") && !p[5]->defaultValue && !p[5]->isAuto));
  CHECK(p[6]->declaredType == std::string("float"));
  CHECK(sexpr(p[7]->defaultValue) == "(> 1 0)");
  CHECK(isa<PolicyRefExpr>(p[8]->defaultValue));
  CHECK(fe.lineCol(p[5]->getRange().Start) == "2:10");

  Frontend empty("kernel k<>() grid(1) threads(32) { }");
  REQUIRE(empty.parse());
  CHECK(empty.kernel().compileParams.empty());
}

TEST_CASE("tensor parameters and the launch specification", "[parser]") {
  Frontend fe("kernel k(A: f16[M, K / 2], C: out T[M], s: f32,)\n"
              "  grid(ceildiv(M, 64), 2, 1,) threads(4 * 32) as (x, y, z) { }");
  REQUIRE(fe.parse());
  KernelDecl &k = fe.kernel();
  REQUIRE(k.params.size() == 3);
  CHECK((!k.params[0]->isOut && k.params[0]->hasShape && k.params[0]->shape.rank() == 2));
  CHECK(toSource(k.params[0]->shape.dims[1]) == "K / 2");
  CHECK((k.params[1]->isOut && k.params[1]->elemTypeName == "T"));
  CHECK((k.params[2]->isScalar() && k.params[2]->elemTypeName == "f32"));
  REQUIRE(k.grid.size() == 3);
  CHECK(toSource(k.grid[0]) == "ceildiv(M, 64)");
  CHECK(toSource(k.threads) == "4 * 32");
  REQUIRE(k.blockIndices.size() == 3);
  CHECK(k.blockIndices[2]->getName() == "z");
  CHECK(k.blockIndices[2]->getKind() == Decl::DK_BlockIndex);

  Frontend noAs("kernel k() grid(1) threads(32) { }");
  REQUIRE(noAs.parse());
  CHECK(noAs.kernel().blockIndices.empty());
  CHECK(noAs.kernel().params.empty());
}

TEST_CASE("trailing commas", "[parser]") {
  ParsedKernel k("copy(A, B,);\nfor i, j in parallel(4, 4,) { C[i, j] = 0.0; }\n"
                 "gemm(a, b, c, policy = square,);");
  CHECK(cast<CallStmt>(k.stmts()[0])->call->args.size() == 2);
  CHECK(cast<ForStmt>(k.stmts()[1])->args.size() == 2);
  CHECK(cast<CallStmt>(k.stmts()[2])->call->args.size() == 4);
  // A lone comma is not an argument list.
  Frontend bad(kernelSource("copy(,);"));
  CHECK_FALSE(bad.parse());
  CHECK(bad.says("test.tl:2:6: error: unexpected ','"));
}

TEST_CASE("nested blocks", "[parser]") {
  ParsedKernel k("{ { let a = 1; { } } let b = 2; }\nfor i in serial(2) { if a { { let c = 3; } } }");
  auto *outer = cast<BlockStmt>(k.stmts().at(0));
  REQUIRE(outer->body.size() == 2);
  auto *inner = cast<BlockStmt>(outer->body[0]);
  REQUIRE(inner->body.size() == 2);
  CHECK(isa<BlockStmt>(inner->body[1]));
  CHECK(cast<BlockStmt>(inner->body[1])->body.empty());
  auto *loop = cast<ForStmt>(k.stmts().at(1));
  auto *ifs = cast<IfStmt>(loop->body->body.at(0));
  CHECK(isa<BlockStmt>(ifs->thenBody->body.at(0)));
}

TEST_CASE("several kernels and constants in one file", "[parser]") {
  Frontend fe("const A = 1;\nkernel one() grid(1) threads(32) { }\nconst B: int = 2;\n"
              "kernel two() grid(1) threads(32) { }\n");
  REQUIRE(fe.parse());
  CHECK(fe.program().consts.size() == 2);
  CHECK(fe.program().consts[1]->declaredType == std::string("int"));
  CHECK(fe.program().kernels.size() == 2);
  CHECK(fe.program().fileName == "test.tl");
  Frontend nothing("// only a comment\n");
  CHECK(nothing.parse());
  CHECK(nothing.program().kernels.empty());
}

TEST_CASE("syntax errors point at the right line and column", "[parser][diagnostics]") {
  SECTION("missing semicolon at the end of a line is reported after the previous token") {
    Frontend fe(kernelSource("  let x = 1\n  let y = 2;"));
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:2:12: error: expected ';' after '1'"));
    CHECK(fe.errors() == 1);
  }
  SECTION("missing closing parenthesis") {
    Frontend fe(kernelSource("  let x = (1 + 2;"));
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:2:17: error: expected ')' after '2'"));
  }
  SECTION("unknown loop kind") {
    Frontend fe(kernelSource("for i in foo(3) { }"));
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:2:10: error: unexpected 'foo'"));
    CHECK(fe.says("'parallel', 'pipelined', 'serial', 'unroll' or 'vectorized'"));
  }
  SECTION("end of file inside a kernel") {
    Frontend fe("kernel k() grid(1) threads(32) {\n  let x = 1;\n");
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.errors() == 1);
    CHECK(fe.says("end of file"));
    CHECK(fe.says("'}'"));
  }
  SECTION("the caret line is printed under the token") {
    Frontend fe("const X = 1 +* 2;");
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:1:14: error: unexpected '*'"));
    CHECK(fe.says("const X = 1 +* 2;\n             ^\n"));
  }
  SECTION("a kernel without a launch specification") {
    Frontend fe("kernel k() {\n}");
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:1:12: error: unexpected '{'"));
    CHECK(fe.says("'grid'"));
  }
  SECTION("errors in two kernels are both reported") {
    Frontend fe("kernel a() grid(1) threads(32) { let = 1; }\n"
                "kernel b() grid(1) threads(32) { let y = ; }\n");
    CHECK_FALSE(fe.parse());
    INFO(fe.messages());
    CHECK(fe.says("test.tl:1:37: error: expected a name after 'let'"));
    CHECK(fe.says("test.tl:2:42: error:"));
  }
}

TEST_CASE("a comparison in a parameter default", "[parser]") {
  // The greedy expression parser takes `1 > 0` before the closing `>`.
  Frontend fe("kernel k<a = 1 > 0>() grid(1) threads(32) { }");
  REQUIRE(fe.parse());
  CHECK(sexpr(fe.kernel().compileParams.at(0)->defaultValue) == "(> 1 0)");
}

TEST_CASE("pathological nesting is an error, not a crash", "[parser][robustness]") {
  std::string deep = "const X = " + std::string(300, '(') + "1" + std::string(300, ')') + ";";
  Frontend fe(deep);
  CHECK_FALSE(fe.parse());
  CHECK(fe.says("brackets and else-if chains are nested too deeply (more than 256 levels"));
  CHECK(fe.errors() == 1);

  // The error stops the run: 500k levels used to overflow the stack after reporting it.
  Frontend huge("const X = " + std::string(500000, '(') + "1" + std::string(500000, ')') + ";");
  CHECK_FALSE(huge.parse());
  CHECK(huge.errors() == 1);

  // Each branch of an else-if chain nests one level deeper in the parser.
  auto elseIfChain = [](int n) {
    std::string s = "kernel k() grid(1) threads(32) as (bx) { if bx == 0 { }";
    for (int i = 1; i < n; ++i)
      s += " else if bx == " + std::to_string(i) + " { }";
    return s + " }";
  };
  Frontend longElseIf(elseIfChain(300));
  CHECK_FALSE(longElseIf.parse());
  CHECK(longElseIf.says("test.tl:1:"));
  CHECK(longElseIf.says("each `else if` counts as one"));
  Frontend shortChain(elseIfChain(200));
  CHECK(shortChain.parse());
  // Separate chains do not add up.
  std::string separate = "kernel k() grid(1) threads(32) as (bx) {";
  for (int i = 0; i < 200; ++i)
    separate += " if bx == 0 { } else if bx == 1 { } let y" + std::to_string(i) + " = 1;";
  Frontend separateChains(separate + " }");
  CHECK(separateChains.parse());

  // Deep operator chains need no brackets: left recursion builds a deep lhs spine.
  std::string chain = "const X = 1";
  for (int i = 0; i < 500; ++i)
    chain += " + 1";
  Frontend longChain(chain + ";");
  CHECK_FALSE(longChain.parse());
  INFO(longChain.messages());
  CHECK(longChain.says("expression is nested too deeply (more than 400 levels)"));
  CHECK(longChain.count("nested too deeply") == 1);

  std::string ok = "const X = 1";
  for (int i = 0; i < 300; ++i)
    ok += " + 1";
  Frontend fine(ok + ";");
  CHECK(fine.analyze());
  CHECK(fine.program().consts[0]->constant->getInt() == 301);
}

namespace {

// Parses `text`; parsing may fail but must not throw, and a failure must come with a
// located diagnostic. When parsing succeeds Sema runs too.
void parseNeverThrows(const std::string &text) {
  Frontend fe(text);
  bool ok = false;
  INFO("input: " << llvm::StringRef(text).take_front(200).str());
  REQUIRE_NOTHROW(ok = fe.analyze());
  if (!ok) {
    CHECK(fe.errors() > 0);
    std::string msgs = fe.messages();
    CHECK((msgs.rfind("test.tl:", 0) == 0 || msgs.rfind("tlc: error:", 0) == 0));
  }
}

} // namespace

TEST_CASE("random bytes never make the parser throw", "[parser][robustness]") {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> byte(0, 255), ascii(9, 126), length(0, 120);
  for (int n = 0; n < 300; ++n) {
    std::string text(length(rng), '\0');
    // Half of the inputs are printable ASCII, which gets past the UTF-8 check.
    for (char &c : text)
      c = static_cast<char>(n % 2 ? byte(rng) : ascii(rng));
    parseNeverThrows(text);
  }
}

TEST_CASE("random token soup never makes the front end throw", "[parser][robustness]") {
  const std::vector<std::string> words = {
      "kernel", "const", "let", "for", "in", "if", "else", "parallel", "pipelined", "serial",
      "grid", "threads", "as", "shared", "fragment", "local", "out", "auto", "f16", "f32",
      "i32", "bool", "dtype", "int", "copy", "gemm", "reduce_sum", "exp", "max", "ceildiv",
      "full_row", "true", "(", ")", "[", "]", "{", "}", "<", ">", ",", ":", ";", "=", "+=",
      "=>", "+", "-", "*", "/", "%", "<<", "&&", "!", "~", "x", "A", "M", "0", "64", "1.5",
      "\"s\"", "/* c */", "// c\n", "\n"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, words.size() - 1), length(1, 60);
  for (int n = 0; n < 300; ++n) {
    std::string text;
    for (size_t i = 0, e = length(rng); i < e; ++i)
      text += words[pick(rng)] + " ";
    parseNeverThrows(text);
  }
}

TEST_CASE("mutations of a valid kernel never make the front end throw", "[parser][robustness]") {
  const std::string valid = tlc::test::kernelWith(R"(
  A_s = shared f16[BM, BK];
  B_s = shared f16[BK, BN];
  C_f = fragment f32[BM, BN];
  clear(C_f);
  for k in pipelined(ceildiv(K, BK), stages = 2) {
    copy(A[by * BM, k * BK], A_s);
    copy(B[k * BK, bx * BN], B_s);
    gemm(A_s, B_s, C_f);
  }
  for i, j in parallel(BM, BN) { C_f[i, j] = C_f[i, j] * scale; }
  copy(C_f, C[by * BM, bx * BN]);)");
  {
    Frontend fe(valid);
    INFO(fe.messages());
    REQUIRE(fe.analyze());
  }
  std::mt19937 rng(99);
  std::uniform_int_distribution<size_t> pos(0, valid.size() - 1), len(1, 12);
  for (int n = 0; n < 300; ++n) {
    std::string text = valid;
    size_t at = pos(rng), count = std::min(len(rng), text.size() - at);
    switch (n % 3) {
    case 0: text.erase(at, count); break;                        // delete a span
    case 1: text.insert(at, valid.substr(pos(rng), count)); break; // duplicate a span
    default: std::swap(text[at], text[pos(rng)]); break;          // swap two characters
    }
    parseNeverThrows(text);
  }
}

TEST_CASE("input larger than the limit is one located error", "[parser][robustness][limits]") {
  std::string big;
  for (int i = 0; big.size() <= (size_t(1) << 20); ++i)
    big += "const c" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  Frontend fe(big);
  CHECK_FALSE(fe.parse());
  CHECK(fe.errors() == 1);
  CHECK(fe.says("test.tl:1:1: error: the file is " + std::to_string(big.size()) +
                " bytes, more than the limit of 1048576 bytes"));
}

TEST_CASE("parsing stops after the error cap", "[parser][robustness][limits]") {
  std::string body;
  for (int i = 0; i < 2000; ++i)
    body += "let x" + std::to_string(i) + " = = ;\n";
  Frontend fe("kernel k() grid(1) threads(32) {\n" + body + "}\n");
  CHECK_FALSE(fe.parse());
  // The 26th error prints "too many errors" and ends the parse; the others are not reported.
  CHECK(fe.errors() == DiagnosticEngine::kMaxErrors + 1);
  CHECK(fe.says("too many errors emitted (25)"));
}
