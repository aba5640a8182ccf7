// The bootstrap of a process started on its own (./prog): one node process.
#include <map>
#include <mutex>

#include "runtime/bootstrap.hpp"
#include "runtime/log.hpp"

namespace mpc::runtime {

std::unique_ptr<Bootstrap> make_pmi2_bootstrap();  // pmi2_client.cpp; null when no PMI_FD

namespace {

class SingletonBootstrap final : public Bootstrap {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string job_attr(const std::string&) override { return {}; }
    void put(const std::string& key, const std::string& value) override { kvs_[key] = value; }
    void fence() override {}
    std::string get(const std::string& key) override {
        auto it = kvs_.find(key);
        return it == kvs_.end() ? std::string() : it->second;
    }
    // Nobody to connect to: a secret for the form's sake.
    const auth::Secret& job_secret() override { return secret_; }
    void abort(int, const char*) override {}
    void finalize() override {}

private:
    std::map<std::string, std::string> kvs_;
    auth::Secret secret_ = auth::make_secret();
};

}  // namespace

// The singleton's names: it is the whole job.
namespace {
std::mutex g_names_lock;
std::map<std::string, std::string> g_names;
}  // namespace

bool Bootstrap::name_publish(const std::string& name, const std::string& port,
                             std::string* error) {
    std::lock_guard<std::mutex> g(g_names_lock);
    if (g_names.emplace(name, port).second) return true;
    *error = "the name is published already";
    return false;
}

bool Bootstrap::name_unpublish(const std::string& name, std::string* error) {
    std::lock_guard<std::mutex> g(g_names_lock);
    if (g_names.erase(name)) return true;
    *error = "the name is not published";
    return false;
}

bool Bootstrap::name_lookup(const std::string& name, std::string* port, bool* found,
                            std::string*) {
    std::lock_guard<std::mutex> g(g_names_lock);
    auto it = g_names.find(name);
    *found = it != g_names.end();
    if (*found) *port = it->second;
    return true;
}

std::unique_ptr<Bootstrap> Bootstrap::create() {
    if (auto pmi = make_pmi2_bootstrap()) return pmi;
    return std::make_unique<SingletonBootstrap>();
}

}  // namespace mpc::runtime
