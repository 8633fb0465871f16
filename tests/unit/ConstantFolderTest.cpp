// Constant folding: floor division and modulo, shifts, overflow, builtins and casts.
#include "frontend/ConstantFolder.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace tlc;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

ConstValue I(int64_t v) { return ConstValue{v}; }
ConstValue F(double v) { return ConstValue{v}; }
ConstValue B(bool v) { return ConstValue{v}; }

// The integer result of folding, failing the test if there is none.
int64_t intOf(const FoldResult &r) {
  INFO("error: " << r.error);
  REQUIRE(r.value);
  REQUIRE(r.value->isInt());
  return r.value->getInt();
}

double floatOf(const FoldResult &r) {
  INFO("error: " << r.error);
  REQUIRE(r.value);
  REQUIRE(r.value->isFloat());
  return r.value->getFloat();
}

bool boolOf(const FoldResult &r) {
  REQUIRE(r.value);
  REQUIRE(r.value->isBool());
  return r.value->getBool();
}

int64_t bin(BinaryOp op, int64_t a, int64_t b) { return intOf(foldBinary(op, I(a), I(b))); }

std::string errorOf(const FoldResult &r) {
  CHECK(!r.value);
  return r.error;
}

} // namespace

TEST_CASE("integer division and remainder round toward negative infinity", "[fold]") {
  CHECK(bin(BinaryOp::Div, 7, 2) == 3);
  CHECK(bin(BinaryOp::Div, -7, 2) == -4);
  CHECK(bin(BinaryOp::Div, 7, -2) == -4);
  CHECK(bin(BinaryOp::Div, -7, -2) == 3);
  CHECK(bin(BinaryOp::Div, -8, 2) == -4);
  CHECK(bin(BinaryOp::Rem, 7, 3) == 1);
  CHECK(bin(BinaryOp::Rem, -7, 3) == 2);
  CHECK(bin(BinaryOp::Rem, 7, -3) == -2);
  CHECK(bin(BinaryOp::Rem, -7, -3) == -1);
  CHECK(bin(BinaryOp::Rem, -6, 3) == 0);
  // a == (a / b) * b + a % b for every sign combination.
  for (int64_t a : {-9, -5, -1, 0, 1, 4, 9})
    for (int64_t b : {-4, -3, -1, 1, 2, 5}) {
      INFO(a << " / " << b);
      CHECK(bin(BinaryOp::Div, a, b) * b + bin(BinaryOp::Rem, a, b) == a);
    }
}

TEST_CASE("division by zero is a folding error", "[fold]") {
  CHECK(errorOf(foldBinary(BinaryOp::Div, I(1), I(0))) == "division by zero");
  CHECK(errorOf(foldBinary(BinaryOp::Rem, I(1), I(0))) == "remainder by zero");
  CHECK(errorOf(foldBinary(BinaryOp::Div, F(1.0), F(0.0))) == "division by zero");
  CHECK(errorOf(foldBuiltin(Builtin::CeilDiv, {I(5), I(0)})) == "ceildiv by zero");
}

TEST_CASE("64-bit overflow is a folding error, not undefined behaviour", "[fold]") {
  CHECK(errorOf(foldBinary(BinaryOp::Add, I(kMax), I(1))) == "integer overflow");
  CHECK(errorOf(foldBinary(BinaryOp::Sub, I(kMin), I(1))) == "integer overflow");
  CHECK(errorOf(foldBinary(BinaryOp::Mul, I(int64_t(1) << 40), I(int64_t(1) << 40))) ==
        "integer overflow");
  // INT64_MIN / -1 traps on x86 if computed naively.
  CHECK(errorOf(foldBinary(BinaryOp::Div, I(kMin), I(-1))) == "integer overflow");
  CHECK(errorOf(foldUnary(UnaryOp::Neg, I(kMin))) == "integer overflow");
  CHECK(errorOf(foldBuiltin(Builtin::Abs, {I(kMin)})) == "integer overflow");
  CHECK(errorOf(foldBuiltin(Builtin::CeilDiv, {I(kMin), I(-1)})) == "integer overflow");
  // The largest results that do fit.
  CHECK(bin(BinaryOp::Add, kMax - 1, 1) == kMax);
  CHECK(bin(BinaryOp::Rem, kMin, -1) == 0);
  CHECK(bin(BinaryOp::Rem, kMin, 3) == 1);
  CHECK(bin(BinaryOp::Div, kMin, 1) == kMin);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(kMin), I(2)})) == kMin / 2);
}

TEST_CASE("shifts", "[fold]") {
  CHECK(bin(BinaryOp::Shl, 1, 10) == 1024);
  CHECK(bin(BinaryOp::Shr, 1024, 3) == 128);
  CHECK(bin(BinaryOp::Shr, -16, 2) == -4); // arithmetic shift
  CHECK(bin(BinaryOp::Shl, 1, 63) == kMin);
  CHECK(errorOf(foldBinary(BinaryOp::Shl, I(1), I(64))) ==
        "shift amount 64 is out of range [0, 63]");
  CHECK(errorOf(foldBinary(BinaryOp::Shr, I(1), I(-1))) ==
        "shift amount -1 is out of range [0, 63]");
}

TEST_CASE("bitwise, comparison and logical folding", "[fold]") {
  CHECK(bin(BinaryOp::BitAnd, 0b1100, 0b1010) == 0b1000);
  CHECK(bin(BinaryOp::BitOr, 0b1100, 0b1010) == 0b1110);
  CHECK(bin(BinaryOp::BitXor, 0b1100, 0b1010) == 0b0110);
  CHECK(intOf(foldUnary(UnaryOp::BitNot, I(0))) == -1);
  CHECK(boolOf(foldBinary(BinaryOp::Lt, I(1), I(2))));
  CHECK_FALSE(boolOf(foldBinary(BinaryOp::Ge, I(1), I(2))));
  CHECK(boolOf(foldBinary(BinaryOp::Eq, I(2), F(2.0))));
  CHECK(boolOf(foldBinary(BinaryOp::Lt, F(1.5), I(2))));
  CHECK_FALSE(boolOf(foldBinary(BinaryOp::And, B(true), B(false))));
  CHECK(boolOf(foldBinary(BinaryOp::Or, B(true), B(false))));
  CHECK(boolOf(foldBinary(BinaryOp::Ne, B(true), B(false))));
  CHECK_FALSE(boolOf(foldUnary(UnaryOp::Not, B(true))));
  // Operations that make no sense on the operands fold to nothing, without an error.
  FoldResult r = foldBinary(BinaryOp::Add, B(true), B(true));
  CHECK(!r.value);
  CHECK(r.error.empty());
  CHECK(!foldBinary(BinaryOp::Rem, F(1.0), F(2.0)).value);
  CHECK(!foldUnary(UnaryOp::Not, I(1)).value);
  CHECK(!foldUnary(UnaryOp::BitNot, F(1.0)).value);
}

TEST_CASE("mixed integer and float operands fold in floating point", "[fold]") {
  CHECK(floatOf(foldBinary(BinaryOp::Add, I(1), F(0.5))) == 1.5);
  CHECK(floatOf(foldBinary(BinaryOp::Div, I(7), F(2.0))) == 3.5);
  CHECK(floatOf(foldBinary(BinaryOp::Mul, F(0.5), F(4.0))) == 2.0);
  CHECK(floatOf(foldUnary(UnaryOp::Neg, F(2.5))) == -2.5);
}

TEST_CASE("scalar builtins", "[fold]") {
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(7), I(2)})) == 4);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(8), I(2)})) == 4);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(-7), I(2)})) == -3);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(7), I(-2)})) == -3);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(0), I(5)})) == 0);
  CHECK(intOf(foldBuiltin(Builtin::CeilDiv, {I(4096), I(128)})) == 32);
  CHECK(!foldBuiltin(Builtin::CeilDiv, {F(7.0), I(2)}).value);
  CHECK(intOf(foldBuiltin(Builtin::Max, {I(3), I(-5)})) == 3);
  CHECK(intOf(foldBuiltin(Builtin::Min, {I(3), I(-5)})) == -5);
  CHECK(floatOf(foldBuiltin(Builtin::Max, {I(3), F(3.5)})) == 3.5);
  CHECK(intOf(foldBuiltin(Builtin::Abs, {I(-4)})) == 4);
  CHECK(floatOf(foldBuiltin(Builtin::Abs, {F(-0.25)})) == 0.25);
  CHECK(floatOf(foldBuiltin(Builtin::Exp2, {I(10)})) == 1024.0);
  CHECK(floatOf(foldBuiltin(Builtin::Log2, {F(8.0)})) == Approx(3.0));
  CHECK(floatOf(foldBuiltin(Builtin::Sqrt, {F(9.0)})) == 3.0);
  CHECK(floatOf(foldBuiltin(Builtin::Rsqrt, {F(4.0)})) == 0.5);
  CHECK(floatOf(foldBuiltin(Builtin::Sigmoid, {F(0.0)})) == 0.5);
  CHECK(floatOf(foldBuiltin(Builtin::Tanh, {F(0.0)})) == 0.0);
  CHECK(intOf(foldBuiltin(Builtin::Select, {B(true), I(1), I(2)})) == 1);
  CHECK(floatOf(foldBuiltin(Builtin::Select, {B(false), I(1), F(2.5)})) == 2.5);
  // Not foldable: inf stays symbolic, select needs a bool condition.
  CHECK(!foldBuiltin(Builtin::Inf, {I(0)}).value);
  CHECK(!foldBuiltin(Builtin::Select, {I(1), I(1), I(2)}).value);
  CHECK(!foldBuiltin(Builtin::Exp, {B(true)}).value);
}

TEST_CASE("casts between constants", "[fold]") {
  CHECK(castConstant(F(3.9), DType::I32).getInt() == 3);
  CHECK(castConstant(F(-3.9), DType::I32).getInt() == -3); // truncation toward zero
  CHECK(castConstant(I(3), DType::F16).getFloat() == 3.0);
  CHECK(castConstant(B(true), DType::F32).getFloat() == 1.0);
  CHECK(castConstant(B(true), DType::I8).getInt() == 1);
  CHECK(castConstant(I(0), DType::Bool).getBool() == false);
  CHECK(castConstant(F(0.5), DType::Bool).getBool() == true);
  CHECK(castConstant(B(false), DType::Bool).getBool() == false);
}

TEST_CASE("integer casts wrap to the width of the target", "[fold]") {
  CHECK(castConstant(I(300), DType::U8).getInt() == 44);
  CHECK(castConstant(I(200), DType::I8).getInt() == -56);
  CHECK(castConstant(I(-1), DType::U8).getInt() == 255);
  CHECK(castConstant(I(-1), DType::U32).getInt() == 4294967295);
  CHECK(castConstant(I(int64_t(1) << 31), DType::I32).getInt() == -(int64_t(1) << 31));
  CHECK(castConstant(I(15), DType::U4).getInt() == 15);
  CHECK(castConstant(I(8), DType::I4).getInt() == -8);
  CHECK(castConstant(I(-9), DType::I4).getInt() == 7);
  CHECK(castConstant(I(65537), DType::I16).getInt() == 1);
  CHECK(castConstant(I(kMin), DType::I64).getInt() == kMin);
}

TEST_CASE("float to integer casts saturate", "[fold]") {
  CHECK(castConstant(F(1e30), DType::I32).getInt() == std::numeric_limits<int32_t>::max());
  CHECK(castConstant(F(-1e30), DType::I32).getInt() == std::numeric_limits<int32_t>::min());
  CHECK(castConstant(F(-5.0), DType::U8).getInt() == 0);
  CHECK(castConstant(F(300.0), DType::U8).getInt() == 255);
  CHECK(castConstant(F(1e30), DType::I64).getInt() == kMax);
  CHECK(castConstant(F(-1e30), DType::I64).getInt() == kMin);
  CHECK(castConstant(F(std::nan("")), DType::I32).getInt() == 0);
  CHECK(castConstant(F(INFINITY), DType::U32).getInt() == 4294967295);
  CHECK(castConstant(F(-8.5), DType::I4).getInt() == -8);
}

TEST_CASE("constant values print recognisably", "[fold]") {
  CHECK(I(-3).str() == "-3");
  CHECK(B(true).str() == "true");
  CHECK(F(2.0).str().find_first_of(".eE") != std::string::npos);
  CHECK(ConstValue{DType::BF16}.str() == "bf16");
  CHECK(ConstValue{WarpPolicy::Square}.str() == "square");
}

TEST_CASE("float casts round to the target format", "[fold][casts]") {
  // Exactly the f16/bf16/fp8 neighbours, as the device's conversions give them.
  CHECK(castConstant(F(0.1), DType::F16).getFloat() == 0.0999755859375);
  CHECK(castConstant(F(0.1), DType::BF16).getFloat() == 0.10009765625);
  CHECK(castConstant(F(0.1), DType::F32).getFloat() == double(0.1f));
  CHECK(castConstant(F(0.1), DType::F64).getFloat() == 0.1);
  CHECK(castConstant(I(1000), DType::F8E4M3).getFloat() == 448.0); // saturates
  CHECK(castConstant(F(-1e6), DType::F8E4M3).getFloat() == -448.0);
  CHECK(castConstant(F(1e6), DType::F8E5M2).getFloat() == 57344.0);
  CHECK(castConstant(F(INFINITY), DType::F8E4M3).getFloat() == 448.0);
  CHECK(castConstant(F(0.3), DType::F8E4M3).getFloat() == 0.3125);
  CHECK(castConstant(F(17.0), DType::F8E4M3).getFloat() == 16.0); // tie to even: 16 | 18
  CHECK(castConstant(F(19.0), DType::F8E4M3).getFloat() == 20.0); // tie to even: 18 | 20
  CHECK(castConstant(F(2049.0), DType::F16).getFloat() == 2048.0);
  CHECK(castConstant(F(2051.0), DType::F16).getFloat() == 2052.0);
  CHECK(castConstant(F(65519.0), DType::F16).getFloat() == 65504.0);
  CHECK(std::isinf(castConstant(F(65520.0), DType::F16).getFloat())); // overflows to inf
  CHECK(std::isinf(castConstant(F(1e39), DType::F32).getFloat()));
  CHECK(castConstant(F(1e-8), DType::F16).getFloat() == 0.0); // below half the smallest subnormal
  CHECK(castConstant(F(6e-8), DType::F16).getFloat() == std::ldexp(1.0, -24)); // subnormal
  CHECK(castConstant(F(0.0009), DType::F8E4M3).getFloat() == 0.0);
  CHECK(castConstant(F(0.002), DType::F8E4M3).getFloat() == std::ldexp(1.0, -9)); // smallest subnormal
  CHECK(std::isnan(castConstant(F(std::nan("")), DType::F16).getFloat()));
  CHECK(std::signbit(castConstant(F(-1e-9), DType::F16).getFloat())); // -0
}
