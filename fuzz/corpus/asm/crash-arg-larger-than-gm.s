; std::bad_alloc in tessel sim (issue 21): an argument shape (1 PiB) larger than
; GM is never checked, and the simulator allocates it.
.kernel "huge_arg"
.cores 1
.arg "x" uint8 1125899906842624 in
        end
