#ifndef TESSEL_IDE_CORE_USERNAMES_H
#define TESSEL_IDE_CORE_USERNAMES_H

// The names the IDE shows. Halide makes a name unique within the process by
// appending "$N" when it has seen it before ("acc$5", "C$30"), so the same
// schedule compiled again in the same IDE session gets new names, and they grow
// with every compile. Before a result reaches the views, every "$<digits>" is
// dropped from its texts, buffer names, loops, provenance and messages; names
// that differ only by such a suffix within one compile do not occur in a
// pipeline (a generator names each Func once). A reduction variable's own
// suffix ("k$x") is part of its name and stays.

#include "dsl/Compile.h"

#include <string>

namespace tessel::ide {

/** `text` without Halide's uniquifying "$<digits>" suffixes ("acc$10.s1.k$x.ko" ->
 * "acc.s1.k$x.ko"). */
std::string withoutHalideSuffixes(const std::string &text);
/** The same over every field of `r` a view shows (texts, diagnostics, lifetimes, tiling,
 * provenance). */
void useUserNames(tessel::CompileResult &r);
/** ... and of a run (diagnostics, comparison, provenance). */
void useUserNames(tessel::RunReport &r);

} // namespace tessel::ide

#endif
