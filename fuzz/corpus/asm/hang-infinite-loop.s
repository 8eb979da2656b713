; Hung tessel sim (issue 21): a branch to itself, no cycle budget by default.
.kernel "spin"
.cores 1
L0:     jmp L0
        end
