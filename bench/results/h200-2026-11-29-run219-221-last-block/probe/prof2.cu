// Timeline probe of the fused split-KV decoding kernel (runs 220-221; their logs print a
// meaningless "0.0 GB/s" after each time, since removed), with the L2 flushed before each call as
// the bench does. Build: nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3 -I stdlib
//   -I runtime -include dec_p.cu prof2.cu
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_fp16.h>

static tlc::TensorView view(void* p, tlc_dtype dt, std::vector<int64_t> shape) {
  tlc::TensorView v{};
  v.data = p; v.dtype = dt; v.rank = (int)shape.size();
  int64_t st = 1;
  for (int i = v.rank - 1; i >= 0; --i) { v.shape[i] = shape[i]; v.strides[i] = st; st *= shape[i]; }
  return v;
}
static void* dalloc(size_t bytes, int fill) { void* p; cudaMalloc(&p, bytes); cudaMemset(p, fill, bytes); return p; }
__device__ unsigned long long tlp_marker;
__global__ void marker() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); tlp_marker = t; }
static void* flushbuf; static size_t flushbytes = size_t(256) << 20;
static void flush() { cudaMemsetAsync(flushbuf, 0, flushbytes); }

template <class F> static float us_flushed(F launch, int reps = 50) {
  std::vector<float> t;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int i = 0; i < reps + 5; ++i) {
    flush(); cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 5) t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
template <class F> static void timeline(const char* label, int blocks, F launch, bool flushFirst) {
  static unsigned long long gt[8192 * 16], ck[8192 * 16];
  void* pg; cudaGetSymbolAddress(&pg, tlp_gt); cudaMemset(pg, 0, sizeof(gt));
  void* pc; cudaGetSymbolAddress(&pc, tlp_ck); cudaMemset(pc, 0, sizeof(ck));
  cudaDeviceSynchronize();
  if (flushFirst) flush();
  marker<<<1, 1>>>();
  launch();
  cudaError_t err = cudaDeviceSynchronize();
  unsigned long long mk; cudaMemcpyFromSymbol(&mk, tlp_marker, 8);
  cudaMemcpyFromSymbol(gt, tlp_gt, sizeof(gt)); cudaMemcpyFromSymbol(ck, tlp_ck, sizeof(ck));
  unsigned long long t0 = ~0ull, tend = 0;
  for (int b = 0; b < blocks; ++b) { if (gt[b * 16]) t0 = std::min(t0, gt[b * 16]); tend = std::max(tend, gt[b * 16 + 11]); }
  printf("-- %s (%s): %d blocks, %s; marker -> first block %.2f us, span %.2f us\n", label, flushFirst ? "flushed" : "warm L2",
         blocks, cudaGetErrorString(err), (t0 - mk) / 1000.0, (tend - t0) / 1000.0);
  const char* names[16] = {"start", "lead landed", "tile0", "tile1", "tile2", "tile3", "tile4", "tile5", "tile6", "tile7",
                           "last tile", "exit", "producer", "smid", "voted", "combiner"};
  for (int slot : {0, 12, 1, 2, 3, 4, 5, 10, 14, 15, 11}) {
    std::vector<double> v;
    for (int b = 0; b < blocks; ++b) if (gt[b * 16 + slot]) v.push_back((gt[b * 16 + slot] - t0) / 1000.0);
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    printf("  %-12s n=%4zu  min %7.2f  p10 %7.2f  med %7.2f  p90 %7.2f  max %7.2f us\n", names[slot], v.size(), v.front(),
           v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
  }
  // The combining blocks: vote -> exit.
  std::vector<double> comb;
  for (int b = 0; b < blocks; ++b) if (gt[b * 16 + 15] && gt[b * 16 + 11]) comb.push_back((gt[b * 16 + 11] - gt[b * 16 + 15]) / 1000.0);
  std::sort(comb.begin(), comb.end());
  if (!comb.empty()) printf("  combine (vote -> exit) n=%zu min %.2f med %.2f max %.2f us\n", comb.size(), comb.front(), comb[comb.size() / 2], comb.back());
}

int main() {
  cudaFree(0);
  flushbuf = dalloc(flushbytes, 0);
  {
    size_t bytes = size_t(8) * 4096 * 128 * 2 * 2 / 2;  // the copy of the same bytes: 8.4 MB read, 8.4 written
    void* a = dalloc(bytes, 0); void* b = dalloc(bytes, 0);
    printf("== copy of 8.4 MB (flushed): %.2f us\n", us_flushed([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }));
    printf("== empty kernel (flushed): %.2f us\n", us_flushed([&] { marker<<<128, 128>>>(); }));
    cudaFree(a); cudaFree(b);
  }
  struct Shape { int b, h, kv, s, d; };
  for (Shape sh : {Shape{1, 64, 8, 4096, 128}, Shape{1, 64, 8, 32768, 128}, Shape{16, 64, 8, 4096, 128}}) {
    const int splits = 16;
    void* q = dalloc(size_t(sh.b) * sh.h * sh.d * 2, 0);
    void* k = dalloc(size_t(sh.b) * sh.kv * sh.s * sh.d * 2, 0);
    void* v = dalloc(size_t(sh.b) * sh.kv * sh.s * sh.d * 2, 0);
    void* part = dalloc(size_t(sh.b) * sh.h * splits * sh.d * 4, 0);
    void* lse = dalloc(size_t(sh.b) * sh.h * splits * 4, 0);
    void* done = dalloc(size_t(sh.b) * sh.kv * 4, 0);
    void* o = dalloc(size_t(sh.b) * sh.h * sh.d * 2, 0);
    auto Q = view(q, TLC_F16, {sh.b, sh.h, sh.d}), K = view(k, TLC_F16, {sh.b, sh.kv, sh.s, sh.d}),
         V = view(v, TLC_F16, {sh.b, sh.kv, sh.s, sh.d}), P = view(part, TLC_F32, {sh.b, sh.h, splits, sh.d}),
         L = view(lse, TLC_F32, {sh.b, sh.h, splits}), D = view(done, TLC_I32, {sh.b, sh.kv}),
         O = view(o, TLC_F16, {sh.b, sh.h, sh.d});
    int nsplit = std::min(16, std::max(1, 264 / sh.b / sh.kv));
    int blocks = nsplit * sh.kv * sh.b;
    auto run = [&] { tlc::Status st = tlc_kernels::flash_decoding(Q, K, V, P, L, D, O); if (!st.isOk()) printf("error %s\n", st.message().c_str()); };
    char label[128];
    snprintf(label, sizeof label, "decoding b%d h%d kv%d s%d (%d splits)", sh.b, sh.h, sh.kv, sh.s, nsplit);
    run(); cudaDeviceSynchronize();
    printf("== %s: %.2f us per call (flushed, events, median of 50)\n", label, us_flushed(run));
    timeline(label, blocks, run, true);
    timeline(label, blocks, run, true);
    timeline(label, blocks, run, false);
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(part); cudaFree(lse); cudaFree(done); cudaFree(o);
  }
  return 0;
}
