; Hung tessel sim even with --max-cycles 1000 (issue 21): one vector
; instruction of 2^31-1 elements per row over many rows, all at one address
; (strides 0), so every access is in bounds and the work is unbounded.
.kernel "huge_vector"
.arch "ascend-like" "2f8b26cf0fe57db9"
.cores 1
        li r10, 0
        li r11, 2147483647
        li r12, 0
        vdup.fp16 r10, r12, r11, 65535, 0/0/0, 0/0/0
        end
