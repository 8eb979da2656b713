; Hung tessel sim (issue 21): a branch to itself, no cycle budget by default.
.kernel "spin"
.arch "ascend-like" "2f8b26cf0fe57db9"
.cores 1
L0:     jmp L0
        end
