# Hand edit of the generated MLA decode kernel (experiment): FlashMLA's schedule.
# Warpgroup 0 computes the whole 64x64 score tile (N = 64 per wgmma instead of 32 on each of
# two warpgroups), its softmax without cross-warpgroup reductions, writes P and the row scales
# to shared memory; both warpgroups then run P @ V on their halves of the 512 columns.
# Warpgroup 1 only waits for P (named barrier 2); warpgroup 0 waits (barrier 3) for warpgroup 1
# to finish the previous step before overwriting P, so its QK^T of step k overlaps warpgroup 1's
# P @ V of step k-1.
import sys, re
src = open(sys.argv[1]).read()
start = src.index("      tl::mbarrier::wait(tl_lead, 0);\n      for (int k = 0; k < tl_k_count; ++k) {")
end_marker = "        tl::mbarrier::arrive(tl_empty + (k % 2));\n      }\n"
end = src.index(end_marker, start) + len(end_marker)
new = r'''      tl::mbarrier::wait(tl_lead, 0);
      const int tl_wg = tl_tid / 128;
      float* const tl_scale_s = tl_reduce_scratch;        // [64] row scales of the step
      float* const tl_rowsum_s = tl_reduce_scratch + 64;  // [64] row sums at the end
      if (tl_wg == 0) {
        float sc[32];
        for (int k = 0; k < tl_k_count; ++k) {
          tl::mbarrier::wait(tl_full + (k % 2), ((k / 2) & 1));
          const bool tl_overwrite50 = (((k * 64) + 63) < seqlen_kv);
          tl::wgmma::discard(sc);
          if (!tl_overwrite50) {
            #pragma unroll
            for (int r = 0; r < 32; ++r) {
              const int j = (r / 4) * 8 + (tl_tid % 4) * 2 + r % 2;
              sc[r] = ((((k * 64) + j) < seqlen_kv) ? 0.0f : (-tl::inf<float>()));
            }
          }
          tl::wgmma::gemm_ss<64, 64, 512, 1, 1, 64, false, true>(Q_s, KV_s + (k % 2) * 32768, sc, tl_tid, tl_overwrite50);
          tl::wgmma::gemm_ss<64, 64, 64, 1, 1, 64, false, true, 1>(Q_pe_s, K_pe_s + (k % 2) * 4096, sc, tl_tid);
          #pragma unroll
          for (int q = 0; q < 2; ++q) row_max_prev[q] = row_max[q];
          tl::wgmma::drain(sc);
          {
            float m[2] = {-tl::inf<float>(), -tl::inf<float>()};
            #pragma unroll
            for (int r = 0; r < 32; ++r) m[(r / 2) % 2] = fmaxf(m[(r / 2) % 2], sc[r]);
            #pragma unroll
            for (int q = 0; q < 2; ++q) m[q] = tl::detail::warp_combine<tl::MaxOp, 4, 1>(m[q]);
            #pragma unroll
            for (int q = 0; q < 2; ++q) row_max[q] = fmaxf(row_max[q], m[q]);
          }
          #pragma unroll
          for (int q = 0; q < 2; ++q) row_scale[q] = tl::exp2(((row_max_prev[q] - row_max[q]) * 0.0601122938f));
          #pragma unroll
          for (int r = 0; r < 32; ++r) sc[r] = tl::exp2(((sc[r] * 0.0601122938f) - (row_max[(r / 2) % 2] * 0.0601122938f)));
          {
            float s[2] = {0.0f, 0.0f};
            #pragma unroll
            for (int r = 0; r < 32; ++r) s[(r / 2) % 2] += sc[r];
            #pragma unroll
            for (int q = 0; q < 2; ++q) s[q] = tl::detail::warp_combine<tl::SumOp, 4, 1>(s[q]);
            #pragma unroll
            for (int q = 0; q < 2; ++q) row_sum[q] = row_sum[q] * row_scale[q] + s[q];
          }
          // warpgroup 1 has finished step k - 1 (its P @ V read S_s and the scales)
          if (k > 0) tl::barrier_sync(3, 256);
          #pragma unroll
          for (int r = 0; r < 32; r += 2) {
            const int t0 = ((tl_tid / 32) % 4) * 16 + ((r / 2) % 2) * 8 + (tl_tid / 4) % 8;
            const int t1 = (r / 4) * 8 + (tl_tid % 4) * 2;
            alignas(16) tl::f16 tmp[2];
            tmp[0] = tl::convert<tl::f16>(sc[r]);
            tmp[1] = tl::convert<tl::f16>(sc[r + 1]);
            tl::copy_vec<4>(&S_s[t0 * 64 + (((t1 / 8) ^ (t0 & 7)) * 8) + t1 % 8], tmp);
          }
          if ((tl_tid % 4) == 0) {
            #pragma unroll
            for (int q = 0; q < 2; ++q) tl_scale_s[((tl_tid / 32) % 4) * 16 + q * 8 + (tl_tid / 4) % 8] = row_scale[q];
          }
          tl::wgmma::fence_proxy_async_shared(); tl::barrier_arrive(2, 256);  // P and the scales of step k
          #pragma unroll
          for (int r = 0; r < 128; ++r) acc_o[r] *= row_scale[(r / 2) % 2];
          tl::wgmma::gemm_ss<64, 512, 64, 1, 2, 256, false, false>(S_s, KV_s + (k % 2) * 32768, acc_o);
          tl::mbarrier::arrive(tl_empty + (k % 2));
        }
        if (tl_k_count > 0) tl::barrier_sync(3, 256);
        if ((tl_tid % 4) == 0) {
          #pragma unroll
          for (int q = 0; q < 2; ++q) tl_rowsum_s[((tl_tid / 32) % 4) * 16 + q * 8 + (tl_tid / 4) % 8] = row_sum[q];
        }
      } else {
        for (int k = 0; k < tl_k_count; ++k) {
          tl::mbarrier::wait(tl_full + (k % 2), ((k / 2) & 1));
          tl::barrier_sync(2, 256);  // P and the scales of step k
          float s[2];
          #pragma unroll
          for (int q = 0; q < 2; ++q) s[q] = tl_scale_s[((tl_tid / 32) % 4) * 16 + q * 8 + (tl_tid / 4) % 8];
          #pragma unroll
          for (int r = 0; r < 128; ++r) acc_o[r] *= s[(r / 2) % 2];
          tl::wgmma::gemm_ss<64, 512, 64, 1, 2, 256, false, false>(S_s, KV_s + (k % 2) * 32768, acc_o);
          tl::barrier_arrive(3, 256);  // S_s and the scales may be overwritten
          tl::mbarrier::arrive(tl_empty + (k % 2));
        }
      }
      tl::barrier_sync(1, 256);
      if (tl_wg == 1) {
        #pragma unroll
        for (int q = 0; q < 2; ++q) row_sum[q] = tl_rowsum_s[((tl_tid / 32) % 4) * 16 + q * 8 + (tl_tid / 4) % 8];
      }
'''
src = src[:start] + new + src[end:]
open(sys.argv[2], 'w').write(src)
