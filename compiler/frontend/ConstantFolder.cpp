#include "ConstantFolder.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tlc {

namespace {

double asDouble(const ConstValue &v) {
  if (v.isFloat())
    return v.getFloat();
  if (v.isBool())
    return v.getBool() ? 1.0 : 0.0;
  return static_cast<double>(v.getInt());
}

bool isNumber(const ConstValue &v) { return v.isInt() || v.isFloat(); }

// Integer division rounds toward negative infinity, matching the index arithmetic of
// tile programs (floordiv/floormod), not C's truncation. Callers rule out b == 0 and the
// one overflowing quotient, INT64_MIN / -1.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

// The remainder takes the sign of the divisor. Computed from C's % rather than as
// a - floorDiv(a, b) * b, whose product can overflow; x % -1 is 0 for every x, and C++
// leaves INT64_MIN % -1 undefined (it traps on x86).
int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

// 64-bit results that do not fit are errors: a wrapped tile size or offset would only
// surface much later as a baffling shape mismatch.
std::optional<int64_t> checkedArith(BinaryOp op, int64_t x, int64_t y) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
  case BinaryOp::Add: overflow = __builtin_add_overflow(x, y, &r); break;
  case BinaryOp::Sub: overflow = __builtin_sub_overflow(x, y, &r); break;
  case BinaryOp::Mul: overflow = __builtin_mul_overflow(x, y, &r); break;
  case BinaryOp::Div:
    overflow = x == std::numeric_limits<int64_t>::min() && y == -1;
    r = overflow ? 0 : floorDiv(x, y);
    break;
  default: break;
  }
  if (overflow)
    return std::nullopt;
  return r;
}

const char *const kOverflow = "integer overflow";

// Wraps an integer to the width of an integer dtype, as a conversion on the device does.
int64_t wrapToWidth(int64_t v, DType to) {
  unsigned bits = bitWidth(to);
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (isSigned(to) && (u >> (bits - 1)) != 0)
    u |= ~mask; // sign-extend
  return static_cast<int64_t>(u);
}

// Float to integer conversion saturates (and NaN becomes 0), like the device's cvt.rzi.
// No integer dtype is wider than 64 bits or unsigned and 64 bits wide.
int64_t saturateToWidth(double d, DType to) {
  if (std::isnan(d))
    return 0;
  unsigned bits = bitWidth(to);
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  if (bits < 64) {
    lo = isSigned(to) ? -(int64_t(1) << (bits - 1)) : 0;
    hi = isSigned(to) ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  }
  double t = std::trunc(d);
  if (t <= static_cast<double>(lo))
    return lo;
  if (t >= static_cast<double>(hi)) // for i64, hi rounds up to 2^63, itself out of range
    return hi;
  return static_cast<int64_t>(t);
}

// A binary floating-point format narrower than double.
struct FloatFormat {
  int fractionBits;    // explicit mantissa bits
  int minNormalExp;    // exponent of the smallest normal number
  double maxFinite;    // largest finite value
  bool saturates;      // FP8 conversions saturate (cvt .satfinite); IEEE ones overflow to inf
};

std::optional<FloatFormat> formatOf(DType t) {
  switch (t) {
  case DType::F16: return FloatFormat{10, -14, 65504.0, false};
  case DType::BF16: return FloatFormat{7, -126, std::ldexp(255.0, 120), false};
  case DType::F32: return FloatFormat{23, -126, double(std::numeric_limits<float>::max()), false};
  case DType::F8E4M3: return FloatFormat{3, -6, 448.0, true};
  case DType::F8E5M2: return FloatFormat{2, -14, 57344.0, true};
  default: return std::nullopt; // f64: doubles are exact
  }
}

// The value of `d` in format `f`: round to nearest, ties to even, with the format's
// subnormals; past the largest finite value, infinity or (FP8) saturation. NaN stays NaN.
double roundToFormat(double d, const FloatFormat &f) {
  if (std::isnan(d) || d == 0.0)
    return d;
  double a = std::fabs(d);
  double r = a;
  if (!std::isinf(a)) {
    // Below the smallest normal the spacing stays that of the subnormals.
    int exp = std::max(std::ilogb(a), f.minNormalExp);
    double quantum = std::ldexp(1.0, exp - f.fractionBits);
    r = std::nearbyint(a / quantum) * quantum; // exact scaling; the default mode is ties-to-even
  }
  if (r > f.maxFinite)
    r = f.saturates ? f.maxFinite : std::numeric_limits<double>::infinity();
  return std::copysign(r, d);
}

FoldResult ok(ConstValue v) { return {v, ""}; }
FoldResult none() { return {std::nullopt, ""}; }
FoldResult fail(std::string msg) { return {std::nullopt, std::move(msg)}; }

} // namespace

FoldResult foldUnary(UnaryOp op, const ConstValue &v) {
  switch (op) {
  case UnaryOp::Neg:
    if (v.isInt()) {
      if (v.getInt() == std::numeric_limits<int64_t>::min())
        return fail(kOverflow);
      return ok({-v.getInt()});
    }
    if (v.isFloat())
      return ok({-v.getFloat()});
    return none();
  case UnaryOp::Not:
    return v.isBool() ? ok({!v.getBool()}) : none();
  case UnaryOp::BitNot:
    return v.isInt() ? ok({~v.getInt()}) : none();
  }
  return none();
}

FoldResult foldBinary(BinaryOp op, const ConstValue &a, const ConstValue &b) {
  if (a.isBool() && b.isBool()) {
    bool x = a.getBool(), y = b.getBool();
    switch (op) {
    case BinaryOp::And: return ok({x && y});
    case BinaryOp::Or: return ok({x || y});
    case BinaryOp::Eq: return ok({x == y});
    case BinaryOp::Ne: return ok({x != y});
    default: return none();
    }
  }
  if (!isNumber(a) || !isNumber(b))
    return none();
  if (a.isInt() && b.isInt()) {
    int64_t x = a.getInt(), y = b.getInt();
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
      if (op == BinaryOp::Div && y == 0)
        return fail("division by zero");
      if (std::optional<int64_t> r = checkedArith(op, x, y))
        return ok({*r});
      return fail(kOverflow);
    case BinaryOp::Rem:
      if (y == 0)
        return fail("remainder by zero");
      return ok({floorMod(x, y)});
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      if (y < 0 || y >= 64)
        return fail("shift amount " + std::to_string(y) + " is out of range [0, 63]");
      return ok({op == BinaryOp::Shl ? static_cast<int64_t>(static_cast<uint64_t>(x) << y)
                                     : x >> y});
    case BinaryOp::Lt: return ok({x < y});
    case BinaryOp::Le: return ok({x <= y});
    case BinaryOp::Gt: return ok({x > y});
    case BinaryOp::Ge: return ok({x >= y});
    case BinaryOp::Eq: return ok({x == y});
    case BinaryOp::Ne: return ok({x != y});
    case BinaryOp::BitAnd: return ok({x & y});
    case BinaryOp::BitXor: return ok({x ^ y});
    case BinaryOp::BitOr: return ok({x | y});
    default: return none();
    }
  }
  double x = asDouble(a), y = asDouble(b);
  switch (op) {
  case BinaryOp::Add: return ok({x + y});
  case BinaryOp::Sub: return ok({x - y});
  case BinaryOp::Mul: return ok({x * y});
  case BinaryOp::Div:
    if (y == 0.0)
      return fail("division by zero");
    return ok({x / y});
  case BinaryOp::Lt: return ok({x < y});
  case BinaryOp::Le: return ok({x <= y});
  case BinaryOp::Gt: return ok({x > y});
  case BinaryOp::Ge: return ok({x >= y});
  case BinaryOp::Eq: return ok({x == y});
  case BinaryOp::Ne: return ok({x != y});
  default: return none();
  }
}

FoldResult foldBuiltin(Builtin b, llvm::ArrayRef<ConstValue> args) {
  for (const ConstValue &v : args)
    if (!isNumber(v) && !(b == Builtin::Select && v.isBool()))
      return none();
  auto unaryMath = [&](double (*fn)(double)) -> FoldResult {
    return ok({fn(asDouble(args[0]))});
  };
  switch (b) {
  case Builtin::Exp: return unaryMath(std::exp);
  case Builtin::Exp2: return unaryMath(std::exp2);
  case Builtin::Log: return unaryMath(std::log);
  case Builtin::Log2: return unaryMath(std::log2);
  case Builtin::Sqrt: return unaryMath(std::sqrt);
  case Builtin::Tanh: return unaryMath(std::tanh);
  case Builtin::Rsqrt: return ok({1.0 / std::sqrt(asDouble(args[0]))});
  case Builtin::Sigmoid: return ok({1.0 / (1.0 + std::exp(-asDouble(args[0])))});
  case Builtin::Abs:
    if (args[0].isInt())
      return args[0].getInt() < 0 ? foldUnary(UnaryOp::Neg, args[0]) : ok(args[0]);
    return ok({std::fabs(args[0].getFloat())});
  case Builtin::Max:
  case Builtin::Min: {
    bool isMax = b == Builtin::Max;
    if (args[0].isInt() && args[1].isInt())
      return ok({isMax ? std::max(args[0].getInt(), args[1].getInt())
                       : std::min(args[0].getInt(), args[1].getInt())});
    double x = asDouble(args[0]), y = asDouble(args[1]);
    return ok({isMax ? std::max(x, y) : std::min(x, y)});
  }
  case Builtin::CeilDiv: {
    if (!args[0].isInt() || !args[1].isInt())
      return none();
    int64_t x = args[0].getInt(), y = args[1].getInt();
    if (y == 0)
      return fail("ceildiv by zero");
    // ceil(x / y) = floor(x / y) + (remainder != 0), without negating x.
    std::optional<int64_t> q = checkedArith(BinaryOp::Div, x, y);
    if (!q)
      return fail(kOverflow);
    return ok({*q + (floorMod(x, y) != 0 ? 1 : 0)});
  }
  case Builtin::Select:
    if (!args[0].isBool())
      return none();
    return ok(args[0].getBool() ? args[1] : args[2]);
  default:
    return none();
  }
}

ConstValue castConstant(const ConstValue &v, DType to) {
  if (to == DType::Bool)
    return {v.isBool() ? v.getBool() : asDouble(v) != 0.0};
  if (isFloat(to)) {
    std::optional<FloatFormat> format = formatOf(to);
    return {format ? roundToFormat(asDouble(v), *format) : asDouble(v)};
  }
  if (v.isInt())
    return {wrapToWidth(v.getInt(), to)};
  if (v.isBool())
    return {int64_t(v.getBool() ? 1 : 0)};
  return {saturateToWidth(v.getFloat(), to)};
}

namespace {

// Evaluates an expression for one warpgroup: constants, warpgroup_id(), lets of those,
// arithmetic and scalar builtins. Each let is evaluated once (a chain of lets that each use
// the previous one twice would otherwise take exponential time).
struct WarpgroupEvaluator {
  explicit WarpgroupEvaluator(int64_t w) : warpgroup(w) {}
  int64_t warpgroup;
  llvm::DenseMap<const LetDecl *, std::optional<ConstValue>> lets;

  static std::optional<ConstValue> ok(const FoldResult &r) {
    return r.error.empty() ? r.value : std::nullopt;
  }

  std::optional<ConstValue> eval(const Expr *e) {
    if (e->constant)
      return e->constant;
    switch (e->getKind()) {
    case Expr::EK_Name: {
      auto *let = llvm::dyn_cast_or_null<LetDecl>(llvm::cast<NameExpr>(e)->decl);
      if (!let || !let->init)
        return std::nullopt;
      if (auto it = lets.find(let); it != lets.end())
        return it->second;
      std::optional<ConstValue> v = eval(let->init);
      if (v && let->declaredType)
        v = castConstant(*v, *let->declaredType);
      return lets[let] = v;
    }
    case Expr::EK_Unary: {
      auto *u = llvm::cast<UnaryExpr>(e);
      auto v = eval(u->operand);
      return v ? ok(foldUnary(u->op, *v)) : std::nullopt;
    }
    case Expr::EK_Binary: {
      auto *b = llvm::cast<BinaryExpr>(e);
      auto l = eval(b->lhs), r = eval(b->rhs);
      return l && r ? ok(foldBinary(b->op, *l, *r)) : std::nullopt;
    }
    case Expr::EK_Call: {
      auto *c = llvm::cast<CallExpr>(e);
      if (c->builtin == Builtin::WarpgroupId)
        return ConstValue{warpgroup};
      if (c->calleeKind == CalleeKind::Cast && c->args.size() == 1) {
        auto v = eval(c->args[0].value);
        return v ? std::optional<ConstValue>(castConstant(*v, c->castType)) : std::nullopt;
      }
      if (c->calleeKind != CalleeKind::Builtin || isTileOp(c->builtin))
        return std::nullopt;
      std::vector<ConstValue> args;
      for (const Expr *a : c->positional()) {
        auto v = eval(a);
        if (!v)
          return std::nullopt;
        args.push_back(*v);
      }
      return ok(foldBuiltin(c->builtin, args));
    }
    default:
      return std::nullopt;
    }
  }
};

} // namespace

std::optional<std::vector<int64_t>> valuesPerWarpgroup(const Expr *e, int64_t threads) {
  int64_t warpgroups = std::max<int64_t>(1, (threads + kWarpgroupThreads - 1) / kWarpgroupThreads);
  std::vector<int64_t> values;
  for (int64_t w = 0; w < warpgroups; ++w) {
    std::optional<ConstValue> v = WarpgroupEvaluator{w}.eval(e);
    if (!v || !v->isInt())
      return std::nullopt;
    values.push_back(v->getInt());
  }
  return values;
}

} // namespace tlc
