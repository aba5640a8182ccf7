// mpcrun: starts the node processes of an MPI job and watches them. Also
// installed as mpiexec and mpirun (the same program; messages use the name it
// was called by).
//
// Each node process hosts a block of the job's ranks as fibers; mpcrun is the
// PMI-2 server through which they find each other (see job.hpp). Usage errors
// exit with status 2 and the usage lines; --help prints all of it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "info.hpp"
#include "job.hpp"
#include "job_plan.hpp"
#include "options.hpp"

namespace {

// The usage lines of the help text (up to its first blank line).
std::string usage_lines() {
    const std::string all = mpc::launcher::usage();
    return all.substr(0, all.find("\n\n") + 1);
}

int usage_error(const char* self, const std::string& error) {
    fprintf(stderr, "%s: %s\n%s(%s --help lists every option)\n", self, error.c_str(),
            usage_lines().c_str(), self);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    const char* slash = argc > 0 ? strrchr(argv[0], '/') : nullptr;
    const char* self = slash ? slash + 1 : argc > 0 ? argv[0] : "mpcrun";
    mpc::launcher::Options o;
    std::string error;
    if (!mpc::launcher::parse_options(argc, argv, &o, &error)) return usage_error(self, error);
    if (o.help) {
        fputs(mpc::launcher::usage(), stdout);
        return 0;
    }
    if (o.version) {
        printf("%s (fibermpi) " FIBERMPI_VERSION_STRING "\n", self);
        return 0;
    }
    if (o.info) return mpc::launcher::print_info(stdout);
    if (!mpc::launcher::apply_environment(getenv, &o, &error)) return usage_error(self, error);
    mpc::launcher::JobPlan plan;
    if (!mpc::launcher::make_plan(o, getenv, &plan, &error)) return usage_error(self, error);
    fflush(stdout);
    return mpc::launcher::run_job(o, plan);
}
