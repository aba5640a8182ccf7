// PMI-2 client: see runtime/pmi2_client.hpp and runtime/bootstrap.hpp.
//
// One request, one answer, under a mutex: the client never sends a thread id,
// so answers come back in order. abort() does not wait for the mutex (a
// fatal error may strike while another thread waits in a fence) and expects
// no answer: the launcher ends the job.
#include "runtime/pmi2_client.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "runtime/env.hpp"
#include "runtime/handshake.hpp"
#include "runtime/log.hpp"
#include "runtime/pmi2_wire.hpp"

namespace mpc::runtime {
namespace pmi2 {
namespace {

// Reads exactly len bytes (blocking); false with *error at end of stream.
bool read_exact(int fd, void* out, size_t len, std::string* error) {
    auto* p = static_cast<char*>(out);
    while (len > 0) {
        const ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = n == 0 ? "the launcher closed the connection"
                            : std::string("reading from the launcher failed: ") + strerror(errno);
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

class Client final : public Bootstrap {
  public:
    Client(int fd, std::string jobid, std::optional<auth::Secret> secret)
        : fd_(fd), jobid_(std::move(jobid)), secret_(secret), from_launcher_(secret.has_value()) {}
    ~Client() override {
        watch_.reset();  // before its fd closes
        if (fd_ >= 0) close(fd_);
    }

    void watch_launcher() { watch_ = std::make_unique<LauncherWatch>(fd_); }

    bool handshake(int rank_hint, std::string* error);

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int appnum() const override { return appnum_; }

    std::string job_attr(const std::string& key) override {
        check_key(key);
        Message req("info-getjobattr");
        req.add("key", key);
        Message resp = call_or_die(req, "info-getjobattr-response");
        bool found = false;
        return resp.get_bool("found", &found) && found ? resp.get("value") : std::string();
    }

    void put(const std::string& key, const std::string& value) override {
        check_key(key);
        std::string encoded = encode_value(value);
        if (encoded.size() > kMaxValueLength)
            fatal("PMI-2: the value of key '%s' takes %zu bytes on the wire; at most %zu fit",
                  key.c_str(), encoded.size(), kMaxValueLength);
        Message req("kvs-put");
        req.add("key", key).add("value", std::move(encoded));
        call_or_die(req, "kvs-put-response");
    }

    void fence() override { call_or_die(Message("kvs-fence"), "kvs-fence-response"); }

    // Names and ports are values (encode_value): any text a program chose.
    bool name_publish(const std::string& name, const std::string& port,
                      std::string* error) override {
        Message req("name-publish"), resp;
        req.add("name", encode_value(name)).add("port", encode_value(port));
        std::lock_guard lock(mutex_);
        return call(req, "name-publish-response", &resp, error);
    }
    bool name_unpublish(const std::string& name, std::string* error) override {
        Message req("name-unpublish"), resp;
        req.add("name", encode_value(name));
        std::lock_guard lock(mutex_);
        return call(req, "name-unpublish-response", &resp, error);
    }
    bool name_lookup(const std::string& name, std::string* port, bool* found,
                     std::string* error) override {
        Message req("name-lookup"), resp;
        req.add("name", encode_value(name));
        std::lock_guard lock(mutex_);
        // A launcher may answer an unknown name with rc != 0: not found.
        if (!call(req, "name-lookup-response", &resp, error)) {
            *found = false;
            return resp.cmd() == "name-lookup-response";
        }
        const std::string* value = resp.find("port");
        *found = value && decode_value(*value, port);
        return true;
    }

    std::string get(const std::string& key) override {
        check_key(key);
        Message req("kvs-get");
        if (!jobid_.empty()) req.add("jobid", jobid_);
        req.add("key", key);
        Message resp = call_or_die(req, "kvs-get-response");
        bool found = false;
        if (!resp.get_bool("found", &found) || !found) return {};
        std::string raw;
        if (!decode_value(resp.get("value"), &raw))
            fatal("PMI-2: the value of key '%s' was not stored by this client", key.c_str());
        return raw;
    }

    const auth::Secret& job_secret() override {
        if (secret_) return *secret_;
        // Published by node process 0 before the first fence (connect()).
        auth::Secret s;
        if (!auth::secret_from_hex(get(kSecretKey), &s))
            fatal(
                "PMI-2: node process 0 published no job secret (the network asked for it before "
                "the first fence, or node process 0 is not a fibermpi program of this version)");
        secret_ = s;
        return *secret_;
    }

    // Under a launcher other than mpcrun: node process 0 makes the secret and
    // puts it, to be seen by everyone after the first fence.
    void publish_secret() {
        if (from_launcher_ || rank_ != 0 || size_ == 1) {
            if (!secret_ && size_ == 1) secret_ = auth::make_secret();
            return;
        }
        secret_ = auth::make_secret();
        put(kSecretKey, auth::to_hex(secret_->bytes.data(), secret_->bytes.size()));
    }

    void abort(int status, const char* message) override {
        std::unique_lock lock(mutex_, std::try_to_lock);  // proceed even if not acquired
        if (fd_ < 0) return;
        std::string text = message ? message : "";
        if (text.size() > 512) text.resize(512);
        for (char& c : text)
            if (c == ';' || static_cast<unsigned char>(c) < ' ') c = ' ';  // Slurm cannot unescape
        Message req("abort");
        req.add_bool("isworld", true).add_int("exitcode", status).add("msg", text);
        std::string frame;
        if (format_frame(req, &frame, nullptr)) write_all(fd_, frame);
    }

    void finalize() override {
        std::lock_guard lock(mutex_);
        if (fd_ < 0) return;
        call_or_die(Message("finalize"), "finalize-response");
        watch_.reset();  // mpcrun may now close first: that is no longer an accident
        close(fd_);
        fd_ = -1;
    }

  private:
    static void check_key(const std::string& key) {
        if (!valid_key(key))
            fatal("PMI-2: invalid key '%s' (1 to %zu printable characters, no '=', ';' or space)",
                  key.c_str(), kMaxKeyLength);
    }

    // Sends req and reads the answer, which must be `expected` with rc=0.
    bool call(const Message& req, const char* expected, Message* resp, std::string* error) {
        if (fd_ < 0) {
            *error = "the PMI connection is closed (finalize was called)";
            return false;
        }
        std::string frame;
        if (!format_frame(req, &frame, error)) return false;
        if (!write_all(fd_, frame)) {
            *error = std::string("writing to the launcher failed: ") + strerror(errno);
            return false;
        }
        if (!read_frame(fd_, resp, error)) return false;
        if (resp->cmd() != expected) {
            *error = "the launcher answered " + resp->cmd() + " instead of " + expected;
            return false;
        }
        long rc = 0;
        if (resp->find("rc") && !resp->get_int("rc", &rc)) rc = -1;
        if (rc != 0) {
            *error = "the launcher answered rc=" + resp->get("rc");
            if (const std::string* why = resp->find("errmsg")) *error += ": " + *why;
            return false;
        }
        return true;
    }

    Message call_or_die(const Message& req, const char* expected) {
        Message resp;
        std::string error;
        bool ok;
        {
            std::lock_guard lock(mutex_);
            ok = call(req, expected, &resp, &error);
        }
        if (!ok) fatal("PMI-2 %s failed: %s", req.cmd().c_str(), error.c_str());
        return resp;
    }

    std::recursive_mutex mutex_;
    std::unique_ptr<LauncherWatch> watch_;
    int fd_;
    std::string jobid_;
    std::optional<auth::Secret> secret_;
    bool from_launcher_;  // mpcrun gave the secret: the connection opens with the handshake
    int rank_ = 0, size_ = 1, appnum_ = 0;
};

bool Client::handshake(int rank_hint, std::string* error) {
    // The PMI-1 init line goes out in one write: Slurm reads it with one read().
    Message init("init");
    init.add_int("pmi_version", 2).add_int("pmi_subversion", 0);
    std::string first = format_v1_line(init);
    uint8_t proof[auth::kProofBytes];
    std::optional<auth::Connector> connector;
    if (from_launcher_) {
        // mpcrun's challenge waits for us; the proof goes out with init.
        uint8_t challenge[auth::kChallengeBytes];
        if (!read_exact(fd_, challenge, sizeof challenge, error)) return false;
        connector.emplace(*secret_, auth::Purpose::kPmi, rank_hint, auth::kLauncherId);
        const char* why = nullptr;
        if (!connector->answer(challenge, sizeof challenge, proof, &why)) {
            *error = std::string("the launcher's handshake failed: ") + why;
            return false;
        }
        first.insert(0, reinterpret_cast<const char*>(proof), sizeof proof);
    }
    if (!write_all(fd_, first)) {
        *error = std::string("writing to the launcher failed: ") + strerror(errno);
        return false;
    }
    if (connector) {
        uint8_t confirm[auth::kConfirmBytes];
        const char* why = nullptr;
        if (!read_exact(fd_, confirm, sizeof confirm, error)) {
            *error += " (it refused our proof of the job's secret?)";
            return false;
        }
        if (!connector->check_confirm(confirm, sizeof confirm, &why)) {
            *error = std::string("the launcher did not prove the job's secret: ") + why;
            return false;
        }
    }
    Message resp;
    if (!read_v1_line(fd_, &resp, error)) return false;
    long rc = 0, version = 0;
    if (resp.cmd() != "response_to_init") {
        *error = "the launcher answered " + resp.cmd() + " to init";
        return false;
    }
    if ((resp.find("rc") && !resp.get_int("rc", &rc)) || rc != 0 ||
        !resp.get_int("pmi_version", &version) || version != 2) {
        *error = "the launcher does not speak PMI-2 (it answered pmi_version=" +
                 resp.get("pmi_version", "?") + " rc=" + resp.get("rc", "?") + ")";
        return false;
    }

    Message full("fullinit");
    if (!jobid_.empty()) full.add("pmijobid", jobid_);
    if (rank_hint >= 0) full.add_int("pmirank", rank_hint);
    full.add_bool("threaded", false);
    Message fr;
    if (!call(full, "fullinit-response", &fr, error)) return false;
    long rank = -1, size = 0, appnum = 0;
    if (!fr.get_int("rank", &rank) || !fr.get_int("size", &size) || size < 1 || size > INT_MAX ||
        rank < 0 || rank >= size) {
        *error = "fullinit-response without a valid rank and size";
        return false;
    }
    rank_ = static_cast<int>(rank);
    size_ = static_cast<int>(size);
    if (fr.get_int("appnum", &appnum) && appnum > 0 && appnum < INT_MAX)  // Slurm says -1
        appnum_ = static_cast<int>(appnum);

    Message id;
    if (!call(Message("job-getid"), "job-getid-response", &id, error)) return false;
    jobid_ = id.get("jobid", jobid_);
    return true;
}

}  // namespace

std::unique_ptr<Bootstrap> connect(const ClientOptions& options, std::string* error) {
    auto client = std::make_unique<Client>(options.fd, options.jobid, options.secret);
    if (!client->handshake(options.rank, error)) return nullptr;
    client->publish_secret();
    if (options.watch_launcher) client->watch_launcher();
    return client;
}

}  // namespace pmi2

namespace {

// The rank the launcher gave: PMI_RANK (mpcrun, hydra, Slurm), PMI_ID (MPICH),
// SLURM_PROCID (srun starting mpcrun's node processes); -1 when none is set.
int rank_from_environment() {
    for (const char* name : {"PMI_RANK", "PMI_ID", "SLURM_PROCID"})
        if (env::get(name)) return static_cast<int>(env::get_int(name, -1, 0, INT_MAX));
    return -1;
}

}  // namespace

std::unique_ptr<Bootstrap> make_pmi2_bootstrap() {
    // Out of the environment first, whatever comes next: programs the ranks
    // start must not inherit it.
    auth::Secret secret;
    const bool have_secret = auth::take_secret_from_environment(&secret);
    const char* fd_text = env::get("PMI_FD");
    const char* port = env::get("PMI_PORT");
    if (!fd_text && !port) return nullptr;
    pmi2::ClientOptions options;
    if (const char* jobid = env::get("PMI_JOBID")) options.jobid = jobid;
    options.rank = rank_from_environment();
    if (have_secret) options.secret = secret;
    std::string error;
    if (fd_text) {
        options.fd = static_cast<int>(env::get_int("PMI_FD", -1, 0, INT_MAX));
        if (fcntl(options.fd, F_GETFD) < 0)
            fatal(
                "PMI_FD=%d is not an open file descriptor: was this process started by a PMI-2 "
                "launcher (mpcrun, srun --mpi=pmi2)?",
                options.fd);
        // Programs that the ranks start must not inherit the connection.
        fcntl(options.fd, F_SETFD, FD_CLOEXEC);
    } else {
        options.fd = pmi2::connect_tcp(port, &error);
        if (options.fd < 0) fatal("PMI-2 bootstrap: %s", error.c_str());
        options.watch_launcher = true;
    }
    auto boot = pmi2::connect(options, &error);
    if (!boot)
        fatal("PMI-2 bootstrap (%s=%s): %s", fd_text ? "PMI_FD" : "PMI_PORT",
              fd_text ? fd_text : port, error.c_str());
    return boot;
}

}  // namespace mpc::runtime
