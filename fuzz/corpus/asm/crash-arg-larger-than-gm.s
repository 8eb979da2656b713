; std::bad_alloc in tessel sim (issue 21): an argument shape (1 PiB) larger than
; GM is never checked, and the simulator allocates it.
.kernel "huge_arg"
.arch "ascend-like" "2f8b26cf0fe57db9"
.cores 1
.arg "x" uint8 1125899906842624 in
        end
