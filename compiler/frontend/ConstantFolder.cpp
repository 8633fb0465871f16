#include "ConstantFolder.h"

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
// tile programs (floordiv/floormod), not C's truncation.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

FoldResult ok(ConstValue v) { return {v, ""}; }
FoldResult none() { return {std::nullopt, ""}; }
FoldResult fail(std::string msg) { return {std::nullopt, std::move(msg)}; }

} // namespace

FoldResult foldUnary(UnaryOp op, const ConstValue &v) {
  switch (op) {
  case UnaryOp::Neg:
    if (v.isInt())
      return ok({-v.getInt()});
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
    case BinaryOp::Add: return ok({x + y});
    case BinaryOp::Sub: return ok({x - y});
    case BinaryOp::Mul: return ok({x * y});
    case BinaryOp::Div:
      if (y == 0)
        return fail("division by zero");
      return ok({floorDiv(x, y)});
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
      return ok({args[0].getInt() < 0 ? -args[0].getInt() : args[0].getInt()});
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
    return ok({-floorDiv(-x, y)});
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
  if (isFloat(to))
    return {asDouble(v)};
  if (v.isInt())
    return v;
  double d = asDouble(v);
  if (!std::isfinite(d))
    return {int64_t(0)};
  return {static_cast<int64_t>(std::trunc(d))};
}

} // namespace tlc
