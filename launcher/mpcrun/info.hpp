// mpcrun --info: what this fibermpi is and what it finds on this host, as
// ompi_info and mpichversion tell: version, build options, launch methods,
// network drivers with the devices and interfaces they would use, progress
// modes. It loads libfabric (when built with it) only to list providers, by
// dlopen: mpcrun itself links no network library.
#pragma once

#include <cstdio>

namespace mpc::launcher {

// Prints the report; returns mpcrun's exit status (0).
int print_info(FILE* out);

}  // namespace mpc::launcher
