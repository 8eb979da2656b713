#ifndef TESSEL_DATABASE_INTERCHANGE_H
#define TESSEL_DATABASE_INTERCHANGE_H

// Moving records between databases: a JSON interchange file (every record
// with the hashes that identify it, no row ids) and merging another tessel.db.
// Records are matched by their keys: generators by name + algorithm hash,
// instances by generator + params, targets by arch hash, schedules by schedule
// hash, results by uid. Results stay attached to their target. See
// docs/database.md ("Merge semantics").

#include "database/ScheduleStore.h"

#include <string>

namespace tessel::db {

/** How many records an import or merge added (the rest were already there). */
struct ImportStats {
    int64_t generators = 0, instances = 0, targets = 0, schedules = 0, results = 0;
    int64_t downgraded = 0; // stored verified results the incoming side had marked unverified
};

/** The whole database as interchange JSON (format "tessel-db", version 1). */
std::string export_json(ScheduleStore &store);
/** Adds the records of an interchange document, in one transaction. Throws
 * DatabaseError for a malformed document (nothing is added then). */
ImportStats import_json(ScheduleStore &store, const std::string &json_text);
/** Adds every record of the database at `other_path` (opened read-only, never changed). */
ImportStats merge_database(ScheduleStore &store, const std::string &other_path);

} // namespace tessel::db

#endif
