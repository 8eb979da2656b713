#ifndef TESSEL_IDE_CORE_LIBRARYEXPORT_H
#define TESSEL_IDE_CORE_LIBRARYEXPORT_H

// Export from the IDE: the schedule being edited, for the open generator,
// parameters and arch, as a one-kernel library through the same exporter as
// `tessel export` (compile, verify on the simulator, package libNAME.a, NAME.h
// and manifest.json). Blocking; the window runs it on a worker thread.

#include "dsl/Compile.h"

#include <QString>

namespace tessel::ide {

struct LibraryExportResult {
    bool ok = false;
    QString message;        // the exporter's error, or what was written
    QString staticLibrary;  // DIR/libNAME.a
    QString header;         // DIR/NAME.h
};

/** Writes DIR/NAME.schedule.json and DIR/NAME.manifest.json (the kernel is
 * called NAME too) and exports into DIR. A bad name, an unwritable folder or a
 * kernel that fails to compile or verify gives ok = false with the message. */
LibraryExportResult exportLibrary(const tessel::CompileRequest &request, const QString &dir, const QString &name);

} // namespace tessel::ide

#endif
