// tl/emu/driver.cpp - the emulator driver's body (tl/emu/driver.h declares run_main): the
// command line, the tensors (random, seeded, or read from files), the call of the kernel's C
// entry point and the output files. `tlc run --emulate` compiles it once per host compiler,
// flags and library (a cached object, docs/emulator.md) and links it with each kernel's
// main.cpp, so that each kernel's build does not compile it again.
// What a kernel's main.cpp includes before the driver (its kernel.cu or kernel.hip): the
// emulated runtime and the device library's types (tl::f16, the fp8 types, ...).
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include "tl/hip/tl.h"
#else
#include <cuda_runtime.h>
#include "tl/tl.h"
#endif
#include "tl/emu/driver.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <random>

#include <sys/stat.h>

namespace tl::emu {

namespace detail {

std::size_t tensor_bytes(const TensorSpec& t) {
  std::size_t n = 1;
  for (std::int64_t e : t.shape) n *= static_cast<std::size_t>(e);
  const int bits = tlc::dtypeBits(t.dtype);
  return bits >= 8 ? n * static_cast<std::size_t>(bits / 8) : (n + 1) / 2;
}

// Random inputs: floats uniform in [-1, 1) rounded to the dtype; i8 in [-8, 8); u8, i4/u4/f4e2m1
// (packed bytes) any byte; wider integers 0 or 1 (masks, flags).
void fill_random(const TensorSpec& t, unsigned char* p, std::size_t bytes, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const std::size_t n = bytes * 8 / static_cast<std::size_t>(std::max(tlc::dtypeBits(t.dtype), 8));
  for (std::size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case TLC_F16: { __half h = __float2half_rn(real(rng)); std::memcpy(p + 2 * i, &h, 2); break; }
      case TLC_BF16: { __nv_bfloat16 h = __float2bfloat16_rn(real(rng)); std::memcpy(p + 2 * i, &h, 2); break; }
      case TLC_F32: { float f = real(rng); std::memcpy(p + 4 * i, &f, 4); break; }
      case TLC_F64: { double f = real(rng); std::memcpy(p + 8 * i, &f, 8); break; }
      // tl's fp8 types: OCP (cuda_fp8.h) on the CUDA lowering, FNUZ (tl/fp8_fnuz.h) on HIP's.
      case TLC_F8E4M3: { ::tl::f8e4m3 v(real(rng)); std::memcpy(p + i, &v, 1); break; }
      case TLC_F8E5M2: { ::tl::f8e5m2 v(real(rng)); std::memcpy(p + i, &v, 1); break; }
      case TLC_I8: p[i] = static_cast<unsigned char>(static_cast<std::int8_t>(static_cast<int>(rng() % 16) - 8)); break;
      case TLC_I4: case TLC_U4: case TLC_F4E2M1: case TLC_U8: p[i] = static_cast<unsigned char>(rng()); break;
      case TLC_BOOL: p[i] = static_cast<unsigned char>(rng() % 2); break;
      default: {  // i16, i32, u32, i64: 0 or 1
        const int size = tlc::dtypeBits(t.dtype) / 8;
        std::memset(p + static_cast<std::size_t>(size) * i, 0, static_cast<std::size_t>(size));
        p[static_cast<std::size_t>(size) * i] = static_cast<unsigned char>(rng() % 2);
      }
    }
  }
}

bool read_file(const std::string& path, unsigned char* p, std::size_t bytes, const char* name) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "tl emulator: error: cannot open %s for tensor %s: %s\n", path.c_str(), name, std::strerror(errno));
    return false;
  }
  std::size_t got = std::fread(p, 1, bytes, f);
  bool extra = std::fgetc(f) != EOF;
  std::fclose(f);
  if (got != bytes || extra) {
    std::fprintf(stderr, "tl emulator: error: %s holds %s bytes for tensor %s, which needs exactly %zu\n", path.c_str(),
                 got != bytes ? std::to_string(got).c_str() : "more", name, bytes);
    return false;
  }
  return true;
}

bool write_file(const std::string& path, const void* p, std::size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(p, 1, bytes, f) != bytes || std::fclose(f) != 0) {
    std::fprintf(stderr, "tl emulator: error: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

bool split_assignment(const std::string& text, std::string& name, std::string& value) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

}  // namespace detail

int run_main(int argc, char** argv, unsigned char* smem, std::size_t smem_bytes, const char* kernel,
             const std::vector<TensorSpec>& tensors, std::vector<ScalarSpec> scalars, const EntryCall& call) {
  std::string output_dir = ".";
  std::vector<std::pair<std::string, std::string>> inputs;
  bool zero_outputs = false;
  auto usage = [&](const std::string& why) {
    std::fprintf(stderr, "tl emulator: error: %s\nusage: %s [--seed S] [--input NAME=FILE]... [--output-dir DIR] "
                 "[--max-blocks N] [--init-outputs nan|zero] [--arg NAME=VALUE]...\n", why.c_str(), argv[0]);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--shape" && (v = value())) continue;  // read by shape_value
    else if (a == "--seed" && (v = value())) config().seed = std::strtoull(v, nullptr, 0);
    else if (a == "--output-dir" && (v = value())) output_dir = v;
    else if (a == "--max-blocks" && (v = value())) config().max_blocks = std::strtol(v, nullptr, 0);
    else if (a == "--init-outputs" && (v = value())) {
      if (std::string(v) != "nan" && std::string(v) != "zero") return usage("--init-outputs takes nan or zero");
      zero_outputs = std::string(v) == "zero";
    } else if ((a == "--input" || a == "--arg") && (v = value())) {
      std::string name, text;
      if (!detail::split_assignment(v, name, text)) return usage(a + " takes NAME=" + (a == "--arg" ? "VALUE" : "FILE"));
      if (a == "--input") {
        bool known = false;
        for (const TensorSpec& t : tensors) known |= name == t.name;
        if (!known) return usage("--input " + name + ": kernel " + kernel + " has no tensor " + name);
        inputs.emplace_back(name, text);
      } else {
        bool known = false;
        for (ScalarSpec& s : scalars)
          if (name == s.name) known = true, s.value = std::strtod(text.c_str(), nullptr);
        if (!known) return usage("--arg " + name + ": kernel " + kernel + " has no scalar parameter " + name);
      }
    } else {
      return usage("unknown argument, or one without its value: " + a);
    }
  }
  mkdir(output_dir.c_str(), 0777);
  shared_window() = SharedWindow{smem, smem_bytes};

  std::mt19937_64 rng(config().seed);
  std::vector<std::vector<unsigned char>> storage(tensors.size());
  std::vector<tlc_tensor_view> views(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = tensors[i];
    const std::size_t bytes = detail::tensor_bytes(t);
    storage[i].assign(std::max<std::size_t>(bytes, 1) + 16, 0);  // never an empty allocation
    unsigned char* data = storage[i].data();
    bool from_file = false;
    for (const auto& [name, path] : inputs)
      if (name == t.name) {
        if (!detail::read_file(path, data, bytes, t.name)) return 1;
        from_file = true;
      }
    if (!from_file) {
      if (!t.out) detail::fill_random(t, data, bytes, rng);
      else if (!zero_outputs && tlc::dtypeBits(t.dtype) >= 16 && t.dtype != TLC_I16 && t.dtype != TLC_I32 &&
               t.dtype != TLC_U32 && t.dtype != TLC_I64)
        std::memset(data, 0xFF, bytes);  // NaN: an element the kernel never writes shows
    }
    tlc_tensor_view& v = views[i];
    std::memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = t.dtype;
    v.rank = static_cast<std::int32_t>(t.shape.size());
    std::int64_t stride = 1;
    for (int d = v.rank - 1; d >= 0; --d) {
      v.shape[d] = t.shape[static_cast<std::size_t>(d)];
      v.strides[d] = stride;
      stride *= std::max<std::int64_t>(v.shape[d], 1);
    }
  }
  std::vector<double> values;
  for (const ScalarSpec& s : scalars) values.push_back(s.value);
  char error[1024] = "";
  const int status = call(views.data(), values.data(), error, sizeof error);
  if (status != 0) {
    std::fprintf(stderr, "tl emulator: error: the launcher of %s refused the call: %s\n", kernel, error);
    return 1;
  }
  std::string manifest = std::string("{\"kernel\": \"") + kernel + "\", \"seed\": " + std::to_string(config().seed) +
                         ", \"tensors\": [";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = tensors[i];
    if (!detail::write_file(output_dir + "/" + t.name + ".bin", storage[i].data(), detail::tensor_bytes(t))) return 1;
    manifest += std::string(i ? ", " : "") + "{\"name\": \"" + t.name + "\", \"dtype\": \"" + tlc::dtypeName(t.dtype) +
                "\", \"out\": " + (t.out ? "true" : "false") + ", \"shape\": [";
    for (std::size_t d = 0; d < t.shape.size(); ++d) manifest += (d ? ", " : "") + std::to_string(t.shape[d]);
    manifest += "], \"file\": \"" + std::string(t.name) + ".bin\"}";
  }
  manifest += "]}\n";
  if (!detail::write_file(output_dir + "/manifest.json", manifest.data(), manifest.size())) return 1;
  return 0;
}

}  // namespace tl::emu
