; Micro-benchmark: one 16 KiB GM -> UB copy on MTE2 and back to GM on MTE3.
; ascend-like: MTE2 busy = 64 setup + 16384 B / 32 B/cycle = 576 cycles (88.9 %
; of the 32 B/cycle peak, NPU_MODEL 6.2); MTE3 busy = 64 + 16384 / 32 (GM write
; rate) = 576 cycles. Checked by tests/npu_target/test_sim_asm.cpp.
.kernel "copy_16k"
.cores 1
.arg "x" uint8 16384 in
.arg "y" uint8 16384 out
.desc d0 dims=1 elem=32 count=512/1/1/1 src=32/0/0/0 dst=32/0/0/0 transform=none
        li r10, 0
        dma MTE2, UB, r10, GM, r1, d0
        set_flag MTE2, MTE3, 0
        wait_flag MTE2, MTE3, 0
        dma MTE3, GM, r2, UB, r10, d0
        end
