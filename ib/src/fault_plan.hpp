// Faults injected on purpose, for the tests that check how a job copes with
// them: MPC_NET_FAULT, read once when the network starts, never on a fast
// path (the faults act where the network is slow anyway).
#pragma once

#include <cstdlib>
#include <string>

#include "runtime/env.hpp"
#include "runtime/log.hpp"

namespace mpc::ib {

struct FaultPlan {
    // Registrations of user memory fail (the receive pool and the send
    // buffers still register): rendezvous must fall back to copies.
    bool refuse_registrations = false;
    // Before connecting to the other node processes, wait until the file
    // MPC_NET_HOLD_FILE exists: their listeners stay open meanwhile (the test
    // of strangers knocking during start-up).
    bool hold_connect = false;
};

// MPC_NET_FAULT for node process `node`: a comma-separated list of faults,
// each for every node process or, as fault@N, for node process N only.
//   register   registrations of user memory fail
//   hold       wait for the file MPC_NET_HOLD_FILE before connecting
// A malformed value stops the job with a message naming what is accepted.
// (Inline here: its one caller is the network's start.)
inline FaultPlan fault_plan_from_env(int node) {
    FaultPlan plan;
    const char* value = runtime::env::get("MPC_NET_FAULT");
    if (!value) return plan;
    const std::string all = value;
    size_t start = 0;
    while (start <= all.size()) {
        size_t end = all.find(',', start);
        if (end == std::string::npos) end = all.size();
        std::string item = all.substr(start, end - start);
        start = end + 1;
        if (item.empty()) continue;
        int only = -1;  // every node process
        if (size_t at = item.find('@'); at != std::string::npos) {
            char* rest = nullptr;
            only = static_cast<int>(std::strtol(item.c_str() + at + 1, &rest, 10));
            if (at + 1 == item.size() || *rest != '\0' || only < 0)
                runtime::fatal("MPC_NET_FAULT=%s: '%s' is not fault@NODE", value, item.c_str());
            item.resize(at);
        }
        const bool here = only < 0 || only == node;
        if (item == "register")
            plan.refuse_registrations |= here;
        else if (item == "hold")
            plan.hold_connect |= here;
        else
            runtime::fatal(
                "MPC_NET_FAULT=%s: unknown fault '%s' (known: register[@NODE], "
                "hold[@NODE])",
                value, item.c_str());
    }
    if (plan.refuse_registrations)
        runtime::warn("MPC_NET_FAULT: memory registrations of this node process will fail");
    return plan;
}

}  // namespace mpc::ib
