#include "ir/AnnotatedLayout.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <vector>

namespace tlc {

using llvm::dyn_cast;

namespace {

// Node evaluations the element-by-element check may spend (elements times the size of the
// simplified map): about a second at worst, so that a huge expression over a large buffer
// is an error instead of a hang.
constexpr int64_t kEnumerationWork = int64_t(1) << 28;

std::string bracket(llvm::ArrayRef<int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The lambda's result expressions as IntExprs over the layout's index variables.
class Translator {
public:
  Translator(const LambdaExpr &lambda, llvm::ArrayRef<IterVarDomain> vars, DiagnosticEngine &diags)
      : lambda(lambda), vars(vars), diags(diags) {}

  std::optional<IntExpr> translate(const Expr *e) {
    if (e->constant) {
      if (e->constant->isInt())
        return IntExpr(e->constant->getInt());
      return fail(e, "a layout result must be an integer");
    }
    // The generated code computes offsets in 32-bit `int`; narrower or unsigned values
    // would wrap where the check does not (the range check below covers int itself).
    if (e->type.isScalar() && e->type.dtype() != DType::I32 && e->type.dtype() != DType::I64)
      return fail(e, "a layout function computes in i32, but this is " + dtypeName(e->type.dtype()).str());
    if (auto *n = dyn_cast<NameExpr>(e)) {
      for (size_t k = 0; k < lambda.params.size(); ++k)
        if (n->decl == lambda.params[k])
          return vars[k].var;
      return fail(e, "'" + n->name + "' is neither an index of the layout function nor a compile-time constant");
    }
    if (auto *u = dyn_cast<UnaryExpr>(e)) {
      auto x = translate(u->operand);
      if (!x)
        return std::nullopt;
      if (u->op == UnaryOp::Neg)
        return IntExpr(0) - *x;
      if (u->op == UnaryOp::BitNot)
        return IntExpr(-1) - *x; // ~x == -x - 1 in two's complement
      return fail(e, "a layout function cannot use '" + spelling(u->op).str() + "'");
    }
    if (auto *b = dyn_cast<BinaryExpr>(e)) {
      IntExprKind kind;
      switch (b->op) {
      case BinaryOp::Add: kind = IntExprKind::Add; break;
      case BinaryOp::Sub: kind = IntExprKind::Sub; break;
      case BinaryOp::Mul: kind = IntExprKind::Mul; break;
      case BinaryOp::Div: kind = IntExprKind::FloorDiv; break; // the language's `/` floors
      case BinaryOp::Rem: kind = IntExprKind::FloorMod; break;
      case BinaryOp::BitAnd: kind = IntExprKind::And; break;
      case BinaryOp::BitOr: kind = IntExprKind::Or; break;
      case BinaryOp::BitXor: kind = IntExprKind::Xor; break;
      case BinaryOp::Shl: kind = IntExprKind::Shl; break;
      case BinaryOp::Shr: kind = IntExprKind::Shr; break; // arithmetic on signed values
      default:
        return fail(e, "a layout function cannot use '" + spelling(b->op).str() + "'");
      }
      auto l = translate(b->lhs);
      if (!l)
        return std::nullopt;
      auto r = translate(b->rhs);
      if (!r)
        return std::nullopt;
      return IntExpr::binary(kind, *l, *r);
    }
    if (auto *c = dyn_cast<CallExpr>(e)) {
      std::vector<Expr *> args = c->positional();
      bool known = c->builtin == Builtin::Min || c->builtin == Builtin::Max || c->builtin == Builtin::CeilDiv;
      if (known && args.size() == 2 && c->args.size() == 2) {
        auto a = translate(args[0]);
        if (!a)
          return std::nullopt;
        auto d = translate(args[1]);
        if (!d)
          return std::nullopt;
        if (c->builtin == Builtin::Min)
          return min(*a, *d);
        if (c->builtin == Builtin::Max)
          return max(*a, *d);
        return IntExpr(0) - floordiv(IntExpr(0) - *a, *d); // ceildiv, exact for every sign
      }
      return fail(e, "a layout function cannot call '" + c->callee + "'");
    }
    return fail(e, "a layout function cannot use this expression");
  }

private:
  std::optional<IntExpr> fail(const Expr *e, const std::string &what) {
    diags.error(e->getRange(), what)
        .hint("a layout result is integer arithmetic (+ - * / % & | ^ << >> ~, min, max, "
              "ceildiv) on the function's indices and compile-time constants");
    return std::nullopt;
  }

  const LambdaExpr &lambda;
  llvm::ArrayRef<IterVarDomain> vars;
  DiagnosticEngine &diags;
};

// The subexpression of `e` whose values may leave 32-bit int, or a null expression. Every
// node is checked, since the generated code computes each one in int.
IntExpr firstBeyondInt32(const IntExpr &e, const VarBounds &bounds) {
  IntRange r = boundOf(e, bounds);
  if (!r.isFinite() || r.lo < INT32_MIN || r.hi > INT32_MAX)
    return e;
  if (e.isBinary()) {
    if (IntExpr l = firstBeyondInt32(e.lhs(), bounds))
      return l;
    return firstBeyondInt32(e.rhs(), bounds);
  }
  return IntExpr();
}

// The widest run (power of two, at most 16 elements, dividing cols) of columns that every
// aligned group keeps at consecutive offsets starting at a multiple of the run.
int64_t vectorRunOf(const std::vector<int64_t> &offsets, int64_t cols) {
  int64_t run = 1;
  for (int64_t v = 2; v <= 16 && cols % v == 0; v *= 2) {
    for (size_t at = 0; at < offsets.size(); at += size_t(v)) {
      if (offsets[at] % v != 0)
        return run;
      for (int64_t k = 1; k < v; ++k)
        if (offsets[at + size_t(k)] != offsets[at] + k)
          return run;
    }
    run = v;
  }
  return run;
}

} // namespace

std::optional<SharedLayout> buildAnnotatedLayout(const LambdaExpr &layout, llvm::StringRef name,
                                                 llvm::ArrayRef<int64_t> shape, int elemBits,
                                                 unsigned line, DiagnosticEngine &diags) {
  std::string buf = "'" + name.str() + "'";
  std::string hint = "annotate_layout needs a bijection of the index space " + bracket(shape) + " of " + buf +
                     ": every result within the shape, no two elements mapped to the same place";
  auto vars = makeIndexVars(shape);
  if (layout.params.size() != shape.size() || layout.results.size() != shape.size())
    return std::nullopt; // Sema reported it
  Translator translator(layout, vars, diags);
  IndexList outputs;
  for (const Expr *r : layout.results) {
    auto x = translator.translate(r);
    if (!x)
      return std::nullopt;
    outputs.push_back(*x);
  }
  Layout indexMap(vars, outputs); // simplified under the indices' bounds
  int64_t elements = numElements(shape);

  // Symbolically: the iterator-map analysis inverts a map only when it is a bijection onto
  // the box its outputs span; that box must be the buffer's.
  std::string whyNot;
  auto inverse = indexMap.inverse(&whyNot);
  bool proven = inverse && inverse->inputShape() == Shape(shape.begin(), shape.end());

  // Otherwise (and for the vector widths) element by element, in row-major order, so that
  // the first collision reported is between the two smallest indices involved.
  int64_t work = 1;
  for (const IntExpr &e : indexMap.outputs())
    work += e.size();
  bool enumerable = elements <= kAnnotateEnumerationLimit && elements * work <= kEnumerationWork;
  if (!proven && !enumerable) {
    diags.error(layout.getRange(), "cannot prove that the layout of " + buf + " is a bijection (" + whyNot +
                                       "), and its " + std::to_string(elements) +
                                       " elements are too many to check one by one (at most " +
                                       std::to_string(kAnnotateEnumerationLimit) + ")")
        .hint("annotate smaller buffers, or write the layout as digits of the indices "
              "(i / 8, i % 8, XORs of them) that the compiler can invert");
    return std::nullopt;
  }
  std::vector<int64_t> offsets; // row-major place of each element, in row-major order
  if (enumerable) {
    offsets.assign(size_t(elements), -1);
    std::vector<int64_t> owner(size_t(elements), -1);
    bool failed = false;
    int64_t flat = 0;
    VarValues values;
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index) {
      if (failed)
        return;
      for (size_t d = 0; d < shape.size(); ++d)
        values[vars[d].var.varId()] = index[d];
      Shape place;
      for (const IntExpr &e : indexMap.outputs()) {
        auto v = evaluate(e, values);
        if (!v) {
          diags.error(layout.getRange(), "the layout function of " + buf + " is undefined at " + bracket(index) +
                                             " (a division by zero or a shift out of range)")
              .hint(hint);
          failed = true;
          return;
        }
        place.push_back(*v);
      }
      int64_t at = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (place[d] < 0 || place[d] >= shape[d]) {
          diags.error(layout.getRange(), "the layout function maps element " + bracket(index) + " of " + buf +
                                             " to " + bracket(place) + ", outside its shape " + bracket(shape))
              .hint(hint);
          failed = true;
          return;
        }
        at = at * shape[d] + place[d];
      }
      if (owner[size_t(at)] >= 0) {
        Shape first(shape.size());
        for (size_t d = shape.size(), rest = size_t(owner[size_t(at)]); d-- > 0; rest /= size_t(shape[d]))
          first[d] = int64_t(rest % size_t(shape[d]));
        diags.error(layout.getRange(), "the layout of " + buf + " is not a bijection: elements " + bracket(first) +
                                           " and " + bracket(index) + " both map to " + bracket(place))
            .hint(hint);
        failed = true;
        return;
      }
      owner[size_t(at)] = flat;
      offsets[size_t(flat++)] = at;
    });
    if (failed)
      return std::nullopt;
  }

  // The offset of the [rows, cols] view: leading dimensions fold into rows, as in every
  // shared layout.
  int64_t cols = shape.back(), rows = elements / cols;
  Layout nd(vars, {flattenRowMajor(indexMap.outputs(), shape)});
  Layout address = shape.size() == 2 ? nd : nd.reshape({rows, cols});
  if (IntExpr wide = firstBeyondInt32(address.outputs()[0], address.inputBounds())) {
    diags.error(layout.getRange(), "the layout function of " + buf + " computes " + wide.str() +
                                       ", which may not fit the 32-bit arithmetic of the generated code")
        .hint("keep intermediate values of the layout small");
    return std::nullopt;
  }
  auto annotated = std::make_shared<AnnotatedLayout>(AnnotatedLayout{
      indexMap, address, offsets.empty() ? 1 : vectorRunOf(offsets, cols), line, {}});
  return SharedLayout::fromAnnotation(rows, cols, elemBits, std::move(annotated));
}

} // namespace tlc
