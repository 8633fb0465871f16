// Timeline probe: per-block timestamps of one launch (instrument.py), and event timing of
// back-to-back calls. Build: nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3
//   -I stdlib -I runtime -DMODE_DEC|-DMODE_MLA -include dec_p.cu|mla_p.cu prof_main.cu
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

struct Shape { int b, h, kv, s, d; };

__global__ void tlp_empty() {}
// Microseconds per call of 200 back-to-back calls (CUDA events), after 20 warm-up calls.
template <class F> static float us_per_call(F launch) {
  for (int i = 0; i < 20; ++i) launch();
  cudaDeviceSynchronize();
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int reps = 200;
  cudaEventRecord(e0);
  for (int i = 0; i < reps; ++i) launch();
  cudaEventRecord(e1); cudaEventSynchronize(e1);
  float ms = 0; cudaEventElapsedTime(&ms, e0, e1);
  return ms * 1000 / reps;
}
template <class F> static void profile_plain(const char* label, F launch) {
  printf("== %s: %.2f us per call (200 back-to-back, events)\n", label, us_per_call(launch));
}
template <class F> static void profile(const char* label, int blocks, F launch) {
  const float us = us_per_call(launch);
  static unsigned long long gt[8192 * 16], ck[8192 * 16];
  
  void* pg; cudaGetSymbolAddress(&pg, tlp_gt); cudaMemset(pg, 0, sizeof(gt));
  void* pc; cudaGetSymbolAddress(&pc, tlp_ck); cudaMemset(pc, 0, sizeof(ck));
  cudaDeviceSynchronize();
  launch();
  cudaError_t err = cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(gt, tlp_gt, sizeof(gt)); cudaMemcpyFromSymbol(ck, tlp_ck, sizeof(ck));
  printf("== %s: %.2f us per call (200 back-to-back, events), %d blocks, %s\n", label, us, blocks,
         cudaGetErrorString(err));
  unsigned long long t0 = ~0ull, tend = 0;
  for (int b = 0; b < blocks; ++b) { t0 = std::min(t0, gt[b * 16]); tend = std::max(tend, gt[b * 16 + 11]); }
  printf("kernel span (first block start .. last block exit): %.2f us\n", (tend - t0) / 1000.0);
  // Per-slot distribution relative to t0 (ns -> us), and per-block durations in clocks.
  const char* names[16] = {"start", "lead landed", "tile0", "tile1", "tile2", "tile3", "tile4", "tile5", "tile6", "tile7",
                           "last tile", "exit", "producer", "smid", "", ""};
  for (int slot : {0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
    std::vector<double> v;
    for (int b = 0; b < blocks; ++b) if (gt[b * 16 + slot]) v.push_back((gt[b * 16 + slot] - t0) / 1000.0);
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    printf("  %-12s n=%4zu  min %7.2f  p10 %7.2f  med %7.2f  p90 %7.2f  max %7.2f us\n", names[slot], v.size(), v.front(),
           v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
  }
  // Durations within a block from clock64 (cycles) for the median block.
  std::vector<double> lead, first, steady, tail, total;
  for (int b = 0; b < blocks; ++b) {
    const unsigned long long* c = ck + b * 16;
    if (!c[0] || !c[11]) continue;
    total.push_back(double(c[11] - c[0]));
    if (c[1]) lead.push_back(double(c[1] - c[0]));
    if (c[2]) first.push_back(double(c[2] - c[0]));
    if (c[10] && c[2] && c[10] > c[2]) steady.push_back(double(c[10] - c[2]));
    if (c[10]) tail.push_back(double(c[11] - c[10]));
  }
  auto med = [](std::vector<double> v) { if (v.empty()) return 0.0; std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  printf("  cycles (median block): entry->lead %.0f, entry->tile0 %.0f, tile0->last tile %.0f, last tile->exit %.0f, total %.0f\n",
         med(lead), med(first), med(steady), med(tail), med(total));
  // SM placement: blocks per SM.
  int per[256] = {0}; int maxper = 0, used = 0;
  for (int b = 0; b < blocks; ++b) { int s = (int)gt[b * 16 + 13]; if (s >= 0 && s < 256) { if (!per[s]) ++used; maxper = std::max(maxper, ++per[s]); } }
  printf("  SMs used %d, at most %d blocks on one SM\n", used, maxper);
}

int main() {
  int dev; cudaGetDevice(&dev); cudaDeviceProp p; cudaGetDeviceProperties(&p, dev);
  printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
#ifdef MODE_DEC
  {
    // The floor's reference: a device-to-device copy of the K and V bytes of 1 x 8 x 4096 x 128,
    // and an empty kernel, timed the same way.
    size_t bytes = size_t(2) * 8 * 4096 * 128 * 2;
    void* a = dalloc(bytes, 0); void* b = dalloc(bytes, 0);
    profile_plain("copy of 16.8 MB (K+V of b1 s4096)", [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); });
    size_t big = size_t(2) * 8 * 32768 * 128 * 2;
    void* c = dalloc(big, 0); void* d = dalloc(big, 0);
    profile_plain("copy of 134 MB (K+V of b1 s32768)", [&] { cudaMemcpyAsync(d, c, big, cudaMemcpyDeviceToDevice); });
    profile_plain("empty kernel", [&] { tlp_empty<<<128, 128>>>(); });
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(d);
  }
  for (Shape sh : {Shape{1, 64, 8, 4096, 128}, Shape{1, 64, 8, 32768, 128}, Shape{16, 64, 8, 4096, 128}}) {
    const int splits = 16;
    void* q = dalloc(size_t(sh.b) * sh.h * sh.d * 2, 0);
    void* k = dalloc(size_t(sh.b) * sh.kv * sh.s * sh.d * 2, 0);
    void* v = dalloc(size_t(sh.b) * sh.kv * sh.s * sh.d * 2, 0);
    void* part = dalloc(size_t(sh.b) * sh.h * splits * sh.d * 4, 0);
    void* lse = dalloc(size_t(sh.b) * sh.h * splits * 4, 0);
    void* o = dalloc(size_t(sh.b) * sh.h * sh.d * 2, 0);
    auto Q = view(q, TLC_F16, {sh.b, sh.h, sh.d}), K = view(k, TLC_F16, {sh.b, sh.kv, sh.s, sh.d}),
         V = view(v, TLC_F16, {sh.b, sh.kv, sh.s, sh.d}), P = view(part, TLC_F32, {sh.b, sh.h, splits, sh.d}),
         L = view(lse, TLC_F32, {sh.b, sh.h, splits}), O = view(o, TLC_F16, {sh.b, sh.h, sh.d});
    int nsplit = std::min(16, std::max(1, 264 / sh.b / sh.kv));
    int blocks = nsplit * sh.kv * sh.b;
    char label[128];
    snprintf(label, sizeof label, "decoding split pass b%d h%d kv%d s%d d%d (%d splits)", sh.b, sh.h, sh.kv, sh.s, sh.d, nsplit);
    profile(label, blocks, [&] { tlc::Status st = tlc_kernels::flash_decoding(Q, K, V, P, L); if (!st.isOk()) printf("error %s\n", st.message().c_str()); });
    snprintf(label, sizeof label, "decoding split + combine b%d s%d", sh.b, sh.s);
    profile(label, blocks, [&] { (void)tlc_kernels::flash_decoding(Q, K, V, P, L); (void)tlc_kernels::flash_decoding_combine(P, L, O); });
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(part); cudaFree(lse); cudaFree(o);
  }
#endif
#ifdef MODE_MLA
  for (int s : {1024, 2048, 8192}) {
    Shape sh{64, 128, 1, s, 512};
    void* q = dalloc(size_t(sh.b) * sh.h * 512 * 2, 0);
    void* qpe = dalloc(size_t(sh.b) * sh.h * 64 * 2, 0);
    void* kv = dalloc(size_t(sh.b) * s * 512 * 2, 0);
    void* kpe = dalloc(size_t(sh.b) * s * 64 * 2, 0);
    void* o = dalloc(size_t(sh.b) * sh.h * 512 * 2, 0);
    auto Q = view(q, TLC_F16, {sh.b, sh.h, 512}), QP = view(qpe, TLC_F16, {sh.b, sh.h, 64}),
         KV = view(kv, TLC_F16, {sh.b, s, 1, 512}), KP = view(kpe, TLC_F16, {sh.b, s, 1, 64}),
         O = view(o, TLC_F16, {sh.b, sh.h, 512});
    char label[128];
    snprintf(label, sizeof label, "MLA decode b64 h128 s%d", s);
    profile(label, 64 * 2, [&] { tlc::Status st = tlc_kernels::flash_mla_decode(Q, QP, KV, KP, O); if (!st.isOk()) printf("error %s\n", st.message().c_str()); });
    cudaFree(q); cudaFree(qpe); cudaFree(kv); cudaFree(kpe); cudaFree(o);
  }
#endif
  return 0;
}
