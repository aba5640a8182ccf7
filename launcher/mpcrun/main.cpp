// mpcrun: starts the node processes of an MPI job and watches them.
//
// Each node process hosts a block of the job's ranks as fibers; mpcrun is the
// PMI-2 server through which they find each other (see job.hpp). Usage errors
// exit with status 2 and the usage text.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "job.hpp"
#include "job_plan.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
    mpc::launcher::Options o;
    std::string error;
    if (!mpc::launcher::parse_options(argc, argv, &o, &error)) {
        fprintf(stderr, "mpcrun: %s\n%s", error.c_str(), mpc::launcher::usage());
        return 2;
    }
    if (o.help) {
        fputs(mpc::launcher::usage(), stdout);
        return 0;
    }
    if (o.version) {
        puts("mpcrun (fibermpi) " FIBERMPI_VERSION_STRING);
        return 0;
    }
    mpc::launcher::JobPlan plan;
    if (!mpc::launcher::make_plan(o, getenv, &plan, &error)) {
        fprintf(stderr, "mpcrun: %s\n%s", error.c_str(), mpc::launcher::usage());
        return 2;
    }
    fflush(stdout);
    return mpc::launcher::run_job(o, plan);
}
