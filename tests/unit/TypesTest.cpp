// Scalar types: dtype names and properties, promotion of binary operands, and literal
// materialisation.
#include "frontend/Types.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace tlc;

namespace {

const std::vector<DType> kAllDTypes = {
    DType::F16, DType::BF16, DType::F32, DType::F64, DType::F8E4M3, DType::F8E5M2, DType::I4,
    DType::U4,  DType::I8,   DType::U8,  DType::I16, DType::I32,    DType::U32,    DType::I64,
    DType::Bool};

Type s(DType t) { return Type::scalar(t); }

} // namespace

TEST_CASE("dtype names round-trip", "[types]") {
  for (DType t : kAllDTypes) {
    INFO(dtypeName(t).str());
    REQUIRE(parseDType(dtypeName(t)));
    CHECK(*parseDType(dtypeName(t)) == t);
  }
  CHECK(dtypeName(DType::F8E4M3) == "f8e4m3");
  CHECK(dtypeName(DType::Bool) == "bool");
  CHECK_FALSE(parseDType("float"));
  CHECK_FALSE(parseDType("F16"));
  CHECK_FALSE(parseDType("u64"));
  CHECK_FALSE(parseDType(""));
}

TEST_CASE("dtype classification and widths", "[types]") {
  unsigned floats = 0, ints = 0;
  for (DType t : kAllDTypes) {
    INFO(dtypeName(t).str());
    // Every dtype is exactly one of float, integer, bool.
    CHECK(int(isFloat(t)) + int(isInteger(t)) + int(t == DType::Bool) == 1);
    floats += isFloat(t);
    ints += isInteger(t);
  }
  CHECK(floats == 6);
  CHECK(ints == 8);
  CHECK(isSigned(DType::I4));
  CHECK_FALSE(isSigned(DType::U4));
  CHECK_FALSE(isSigned(DType::U32));
  CHECK(isSigned(DType::BF16));
  CHECK_FALSE(isSigned(DType::Bool));
  CHECK(bitWidth(DType::I4) == 4);
  CHECK(bitWidth(DType::U4) == 4);
  CHECK(bitWidth(DType::F8E5M2) == 8);
  CHECK(bitWidth(DType::BF16) == 16);
  CHECK(bitWidth(DType::U32) == 32);
  CHECK(bitWidth(DType::F64) == 64);
  CHECK(bitWidth(DType::I64) == 64);
}

TEST_CASE("type predicates", "[types]") {
  CHECK(Type::intLiteral().isIntegral());
  CHECK(Type::intLiteral().isNumeric());
  CHECK_FALSE(Type::intLiteral().isFloating());
  CHECK(Type::floatLiteral().isFloating());
  CHECK_FALSE(Type::floatLiteral().isIntegral());
  CHECK(s(DType::U8).isIntegral());
  CHECK_FALSE(s(DType::Bool).isNumeric());
  CHECK_FALSE(s(DType::Bool).isIntegral());
  CHECK(s(DType::Bool).isBool());
  CHECK_FALSE(Type::dtypeValue().isNumeric());
  CHECK_FALSE(Type::buffer().isScalar());
  CHECK(Type::error().isError());
  CHECK(Type::index() == s(DType::I32));
  // Scalars compare by dtype; other kinds by kind alone.
  CHECK(s(DType::F16) != s(DType::BF16));
  CHECK(Type::buffer() == Type::buffer());
  CHECK(Type::intLiteral() != s(DType::I32));
}

TEST_CASE("type names", "[types]") {
  CHECK(s(DType::BF16).str() == "bf16");
  CHECK(Type::intLiteral().str() == "int");
  CHECK(Type::floatLiteral().str() == "float");
  CHECK(Type::dtypeValue().str() == "dtype");
  CHECK(Type::error().str() == "<error>");
  CHECK(Type::buffer().str() == "buffer");
  CHECK(policyName(WarpPolicy::FullCol) == "full_col");
}

TEST_CASE("promotion of literals", "[types]") {
  // Literals adapt to the concrete side.
  CHECK(promote(Type::intLiteral(), s(DType::F16)) == s(DType::F16));
  CHECK(promote(s(DType::I8), Type::intLiteral()) == s(DType::I8));
  CHECK(promote(Type::floatLiteral(), s(DType::BF16)) == s(DType::BF16));
  // A float literal does not fit an integer type: the result is f32.
  CHECK(promote(Type::floatLiteral(), s(DType::I32)) == s(DType::F32));
  CHECK(promote(s(DType::U8), Type::floatLiteral()) == s(DType::F32));
  // Two literals stay literals.
  CHECK(promote(Type::intLiteral(), Type::intLiteral()) == Type::intLiteral());
  CHECK(promote(Type::intLiteral(), Type::floatLiteral()) == Type::floatLiteral());
  CHECK(promote(Type::floatLiteral(), Type::intLiteral()) == Type::floatLiteral());
  CHECK(promote(Type::floatLiteral(), Type::floatLiteral()) == Type::floatLiteral());
}

TEST_CASE("promotion of concrete types", "[types]") {
  // Floats: the wider wins; f16 and bf16 hold neither each other, so they meet at f32.
  CHECK(promote(s(DType::F16), s(DType::BF16)) == s(DType::F32));
  CHECK(promote(s(DType::BF16), s(DType::F16)) == s(DType::F32));
  CHECK(promote(s(DType::F16), s(DType::F32)) == s(DType::F32));
  CHECK(promote(s(DType::F64), s(DType::F32)) == s(DType::F64));
  CHECK(promote(s(DType::F8E4M3), s(DType::F16)) == s(DType::F16));
  CHECK(promote(s(DType::BF16), s(DType::F8E5M2)) == s(DType::BF16));
  // Integer with float gives the float.
  CHECK(promote(s(DType::I64), s(DType::F16)) == s(DType::F16));
  CHECK(promote(s(DType::BF16), s(DType::I32)) == s(DType::BF16));
  // Integers: the wider wins.
  CHECK(promote(s(DType::I8), s(DType::I32)) == s(DType::I32));
  CHECK(promote(s(DType::I64), s(DType::U32)) == s(DType::I64));
  CHECK(promote(s(DType::U4), s(DType::I8)) == s(DType::I8));
  // Errors absorb everything.
  CHECK(promote(Type::error(), s(DType::F32)).isError());
  CHECK(promote(Type::intLiteral(), Type::error()).isError());
}

TEST_CASE("promotion does not depend on operand order", "[types]") {
  std::vector<Type> numeric = {Type::intLiteral(), Type::floatLiteral()};
  for (DType t : kAllDTypes)
    if (t != DType::Bool)
      numeric.push_back(s(t));
  for (Type a : numeric)
    for (Type b : numeric) {
      INFO(a.str() << " and " << b.str());
      CHECK(promote(a, b) == promote(b, a));
    }
  // Equal width, mixed signedness: unsigned wins, as in C.
  CHECK(promote(s(DType::I32), s(DType::U32)) == s(DType::U32));
  CHECK(promote(s(DType::U4), s(DType::I4)) == s(DType::U4));
}

TEST_CASE("materialize gives literals their default type", "[types]") {
  CHECK(materialize(Type::intLiteral()) == s(DType::I32));
  CHECK(materialize(Type::floatLiteral()) == s(DType::F32));
  CHECK(materialize(s(DType::F16)) == s(DType::F16));
  CHECK(materialize(Type::dtypeValue()) == Type::dtypeValue());
  CHECK(materialize(Type::error()).isError());
}
