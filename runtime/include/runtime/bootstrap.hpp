// runtime/bootstrap: how a node process learns about the job and exchanges
// addresses with the other node processes.
//
// Speaks the PMI-2 wire protocol when started by a PMI-2 launcher (mpcrun,
// Slurm's srun --mpi=pmi2: PMI_FD is set); otherwise the process is a
// singleton job of one node process.
#pragma once

#include <memory>
#include <string>

namespace mpc::runtime {

class Bootstrap {
public:
    virtual ~Bootstrap() = default;

    // This node process's index and the number of node processes.
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual int appnum() const { return 0; }

    // A job attribute (PMI_process_mapping, ...); empty when absent.
    virtual std::string job_attr(const std::string& key) = 0;
    // Key-value store: put, then fence (collective), then get any key.
    virtual void put(const std::string& key, const std::string& value) = 0;
    virtual void fence() = 0;
    virtual std::string get(const std::string& key) = 0;
    // Asks the launcher to end the whole job.
    virtual void abort(int status, const char* message) = 0;
    virtual void finalize() = 0;

    // PMI-2 client when PMI_FD is set, otherwise a singleton.
    static std::unique_ptr<Bootstrap> create();
};

}  // namespace mpc::runtime
