# The assembly of the same kernel (select_instructions). Right because: r1-r3 hold the
# GM addresses of A, B, C; loops are counted branches; every dma/mmad takes its
# addresses from registers computed just before it (element index * bytes + buffer
# offset), the flags match the NPU IR of insert_sync one for one, and the program ends
# with end.
.kernel "gemm"
.arch "ascend-like" "2f8b26cf0fe57db9"
.cores 1
.arg "A" fp16 32x32 in
.arg "B" fp16 32x32 in
.arg "C" fp32 32x32 out
.desc d0 dims=2 elem=2 count=16/16/1/1 src=2/64/0/0 dst=2/32/0/0 transform=none   ; 512 bytes
.desc d1 dims=1 elem=2 count=256/1/1/1 src=2/0/0/0 dst=2/0/0/0 transform=none   ; 512 bytes
.desc d2 dims=2 elem=4 count=16/16/1/1 src=4/64/0/0 dst=4/128/0/0 transform=none   ; 1024 bytes
.prov 0 "" "" ""
.prov 1 "stage_A" "A_im_global_wrapper" ""
.prov 2 "stage_A0" "A_im_global_wrapper_global_wrapper" ""
.prov 3 "stage_B" "B_im_global_wrapper" ""
.prov 4 "stage_B0" "B_im_global_wrapper_global_wrapper" ""
.prov 5 "tile_C" "C" ""
.prov 6 "mmad" "acc" "acc.s1.k$x.ki"
.prov 7 "tile_C" "C" "C.s0.i.io"
.prov 8 "tile_C" "C" "C.s0.j.jo"
.prov 9 "k_chunks" "acc" "acc.s1.k$x.ko"
.prov 10 "stage_A" "A_im_global_wrapper" "acc.s1.k$x.ko"
.prov 11 "stage_A0" "A_im_global_wrapper_global_wrapper" "acc.s1.k$x.ko"
.prov 12 "stage_B" "B_im_global_wrapper" "acc.s1.k$x.ko"
.prov 13 "stage_B0" "B_im_global_wrapper_global_wrapper" "acc.s1.k$x.ko"
    set_flag MTE1, MTE2, 1 @p5
    set_flag MTE1, MTE2, 1 @p5
    set_flag M, MTE1, 1 @p5
    set_flag M, MTE1, 1 @p5
    set_flag MTE1, MTE2, 2 @p5
    set_flag MTE1, MTE2, 2 @p5
    set_flag M, MTE1, 2 @p5
    set_flag M, MTE1, 2 @p5
    set_flag FIX, M, 1 @p5
    set_flag FIX, M, 1 @p5
    li r4, 0 @p7
    li r5, 2 @p7
L12:
    li r6, 0 @p8
    li r7, 2 @p8
L14:
    wait_flag FIX, M, 1 @p8
    li r8, 0 @p9
    li r9, 2 @p9
L17:
    wait_flag MTE1, MTE2, 1 @p9
    remi r10, r8, 2 @p10
    muli r10, r10, 256 @p10
    muli r10, r10, 2 @p10
    muli r11, r4, 32 @p10
    add r11, r11, r8 @p10
    muli r11, r11, 16 @p10
    muli r11, r11, 2 @p10
    add r11, r11, r1 @p10
    dma MTE2, L1, r10, GM, r11, d0 @p1
    wait_flag M, MTE1, 1 @p9
    set_flag MTE2, MTE1, 0 @p11
    wait_flag MTE2, MTE1, 0 @p11
    remi r11, r8, 2 @p11
    muli r11, r11, 256 @p11
    muli r11, r11, 2 @p11
    remi r10, r8, 2 @p11
    muli r10, r10, 256 @p11
    muli r10, r10, 2 @p11
    dma MTE1, L0A, r11, L1, r10, d1 @p2
    wait_flag MTE1, MTE2, 2 @p9
    remi r10, r8, 2 @p12
    muli r10, r10, 256 @p12
    muli r10, r10, 2 @p12
    addi r10, r10, 1024 @p12
    muli r11, r8, 32 @p12
    add r11, r11, r6 @p12
    muli r11, r11, 16 @p12
    muli r11, r11, 2 @p12
    add r11, r11, r2 @p12
    dma MTE2, L1, r10, GM, r11, d0 @p3
    wait_flag M, MTE1, 2 @p9
    set_flag MTE2, MTE1, 0 @p13
    wait_flag MTE2, MTE1, 0 @p13
    remi r11, r8, 2 @p13
    muli r11, r11, 256 @p13
    muli r11, r11, 2 @p13
    remi r10, r8, 2 @p13
    muli r10, r10, 256 @p13
    muli r10, r10, 2 @p13
    addi r10, r10, 1024 @p13
    dma MTE1, L0B, r11, L1, r10, d1 @p4
    seq r10, r8, r0 @p9
    beq r10, r0, L74 @p9
    set_flag MTE1, M, 0 @p9
    wait_flag MTE1, M, 0 @p9
    remi r10, r6, 2 @p9
    muli r10, r10, 256 @p9
    muli r10, r10, 4 @p9
    remi r11, r8, 2 @p9
    muli r11, r11, 256 @p9
    muli r11, r11, 2 @p9
    remi r12, r8, 2 @p9
    muli r12, r12, 256 @p9
    muli r12, r12, 2 @p9
    mmad.fp16 r10, r11, r12, 16, 16, 16, 1 @p6
    jmp L86 @p9
L74:
    set_flag MTE1, M, 0 @p9
    wait_flag MTE1, M, 0 @p9
    remi r12, r6, 2 @p9
    muli r12, r12, 256 @p9
    muli r12, r12, 4 @p9
    remi r11, r8, 2 @p9
    muli r11, r11, 256 @p9
    muli r11, r11, 2 @p9
    remi r10, r8, 2 @p9
    muli r10, r10, 256 @p9
    muli r10, r10, 2 @p9
    mmad.fp16 r12, r11, r10, 16, 16, 16, 0 @p6
L86:
    set_flag M, MTE1, 2 @p9
    set_flag MTE1, MTE2, 2 @p9
    set_flag M, MTE1, 1 @p9
    set_flag MTE1, MTE2, 1 @p9
    addi r8, r8, 1 @p9
    blt r8, r9, L17 @p9
    set_flag M, FIX, 0 @p8
    wait_flag M, FIX, 0 @p8
    muli r8, r4, 32 @p8
    add r8, r8, r6 @p8
    muli r8, r8, 16 @p8
    muli r8, r8, 4 @p8
    add r8, r8, r3 @p8
    remi r9, r6, 2 @p8
    muli r9, r9, 256 @p8
    muli r9, r9, 4 @p8
    dma FIX, GM, r8, L0C, r9, d2 @p5
    set_flag FIX, M, 1 @p8
    addi r6, r6, 1 @p8
    blt r6, r7, L14 @p8
    addi r4, r4, 1 @p7
    blt r4, r5, L12 @p7
    wait_flag MTE1, MTE2, 1 @p5
    wait_flag MTE1, MTE2, 1 @p5
    wait_flag M, MTE1, 1 @p5
    wait_flag M, MTE1, 1 @p5
    wait_flag MTE1, MTE2, 2 @p5
    wait_flag MTE1, MTE2, 2 @p5
    wait_flag M, MTE1, 2 @p5
    wait_flag M, MTE1, 2 @p5
    wait_flag FIX, M, 1 @p5
    wait_flag FIX, M, 1 @p5
    end
