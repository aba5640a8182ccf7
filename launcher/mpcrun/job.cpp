// Job control of mpcrun: see job.hpp.
#include "job.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "job_plan.hpp"
#include "line_buffer.hpp"
#include "node_launch.hpp"
#include "pmi2_server.hpp"
#include "remote_launch.hpp"
#include "runtime/auth.hpp"
#include "runtime/netif.hpp"

extern char** environ;

namespace mpc::launcher {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kKillGrace = std::chrono::seconds(1);   // SIGTERM, then SIGKILL
constexpr auto kDrainGrace = std::chrono::seconds(1);  // output left after the last exit
// A remote node process's PMI connection closed early: the time its launcher
// (ssh, srun) gets to report the death itself, with the real status.
constexpr auto kLostGrace = std::chrono::seconds(2);
constexpr size_t kStdinBuffer = 64 * 1024;

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
    int saved = errno;
    unsigned char byte = static_cast<unsigned char>(sig);
    ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
    (void)ignored;
    errno = saved;
}

struct OutputStream {
    int fd = -1;      // read end of the node process's pipe
    int target = -1;  // mpcrun's stdout or stderr
    LineBuffer lines;
};

// A process mpcrun started: one node process (local fork, or its ssh), or
// srun carrying all of them.
struct Child {
    pid_t pid = -1;
    int first_node = 0, last_node = 0;  // the node processes it carries
    OutputStream out, err;
    bool exited = false;
};

// Job ids hold a random part, so that two jobs of one mpcrun pid differ (the
// job's secret, not the id, is what keeps others out).
std::string make_jobid() {
    uint32_t random = 0;
    runtime::auth::random_bytes(&random, sizeof random);
    char text[64];
    snprintf(text, sizeof(text), "mpcrun-%d-%08x", static_cast<int>(getpid()), random);
    return text;
}

class Job {
  public:
    Job(const Options& o, const JobPlan& plan)
        : o_(o),
          plan_(plan),
          secret_(runtime::auth::make_secret()),
          pmi_(plan.node_procs, make_jobid(), secret_) {
        // Node processes fill their nodes in turn: per_node on each.
        pmi_.set_job_attr("PMI_process_mapping", "(vector,(0," + std::to_string(plan.nodes) + "," +
                                                     std::to_string(plan.per_node) + "))");
    }
    ~Job() {
        if (stdin_pipe_ >= 0) close(stdin_pipe_);
    }
    int run();

  private:
    enum class Watch { kPmi, kOut, kErr, kStdin, kStdinPipe, kSignal, kListen, kPending };

    bool start_all();
    bool start_local(int node);
    bool start_ssh(int node, const std::string& pmi_address);
    bool start_srun(const std::string& pmi_address);
    bool add_child(const LaunchResult& r, int first_node, int last_node, const std::string& error);
    std::string pmi_address(std::string* error);
    void loop();
    void on_signals();
    void reap();
    void read_output(OutputStream& s);
    void read_stdin();
    void write_stdin();
    void handle_pmi_events();
    void end_job(int status, const std::string& message, int sig = SIGTERM);
    void signal_all(int sig);
    std::string describe(int node) const;
    std::string describe_child(const Child& child) const;
    void write_out(int target, const std::string& text);
    bool done() const;

    const Options& o_;
    const JobPlan& plan_;
    const runtime::auth::Secret secret_;  // the job's: node processes prove it on every connection
    Pmi2Server pmi_;
    std::vector<Child> children_;
    int alive_ = 0;
    Clock::time_point lost_at_ = Clock::time_point::max();
    std::string lost_message_;
    int lost_client_ = -1;  // the first node process whose PMI connection closed early
    bool ending_ = false;
    int exit_status_ = 0;
    Clock::time_point kill_at_ = Clock::time_point::max();
    Clock::time_point timeout_at_ = Clock::time_point::max();
    Clock::time_point drain_until_ = Clock::time_point::max();
    bool stdin_open_ = true;  // mpcrun's stdin still to be read
    int stdin_pipe_ = -1;     // write end of node process 0's stdin
    std::string stdin_buf_;
    bool target_broken_[3] = {false, false, false};
};

int Job::run() {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "mpcrun: pipe failed: %s\n", strerror(errno));
        return 1;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        struct sigaction old {};
        sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN && sig != SIGCHLD) continue;  // nohup mpcrun ...
        sigaction(sig, &sa, nullptr);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);  // a background mpcrun reading the terminal gets EIO, not stopped

    if (!start_all()) end_job(1, "");
    if (o_.timeout > 0)
        timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(o_.timeout));
    loop();
    if (pmi_.refused() > Pmi2Server::kLoggedRefusals)
        write_out(STDERR_FILENO, "mpcrun: " + std::to_string(pmi_.refused()) +
                                     " connections to the PMI port were refused in all\n");
    return exit_status_;
}

bool Job::start_all() {
    if (plan_.mode == LaunchMode::kLocal) {
        for (int n = 0; n < plan_.node_procs; ++n)
            if (!start_local(n)) return false;
        return true;
    }
    std::string error;
    const std::string address = pmi_address(&error);
    if (address.empty()) {
        write_out(STDERR_FILENO, "mpcrun: " + error + "\n");
        return false;
    }
    if (plan_.mode == LaunchMode::kSlurm) return start_srun(address);
    for (int n = 0; n < plan_.node_procs; ++n)
        if (!start_ssh(n, address)) return false;
    return true;
}

// host:port of the PMI listener as remote node processes reach it. It binds
// one address only: loopback when every node process runs here; else
// MPC_PMI_HOST's (an address of this host, or a name resolving to one), else
// the job's interface (MPC_NET_IF, as the tcp driver).
std::string Job::pmi_address(std::string* error) {
    std::string host, bind_to;
    const char* chosen = getenv("MPC_PMI_HOST");
    if (chosen && *chosen) {
        host = chosen;
        bind_to = runtime::netif::local_address_of(host, error);
        if (bind_to.empty()) *error = "MPC_PMI_HOST=" + host + ": " + *error;
    } else if (plan_.one_host) {
        host = bind_to = runtime::netif::kLoopback;
    } else {
        host = bind_to = runtime::netif::job_address(error);
    }
    if (bind_to.empty()) return {};
    const int port = pmi_.listen_tcp(bind_to, error);
    if (port < 0) return {};
    if (host.find(':') != std::string::npos) host = "[" + host + "]";  // an IPv6 address
    return host + ":" + std::to_string(port);
}

bool Job::start_local(int n) {
    std::string error;
    LaunchResult r;
    int pmi_fd = pmi_.open_channel(n, &error);
    if (pmi_fd >= 0) {
        EnvVars vars = job_variables(o_, plan_);
        vars.emplace_back("MPC_NODE_ID", std::to_string(n));
        for (auto& kv : pmi_.child_environment(n, pmi_fd)) vars.push_back(kv);  // these win
        r = launch_node(o_.program, vars, pmi_fd, n == 0, &error);
        pmi_.close_child_end(n);
    }
    return add_child(r, n, n, error);
}

bool Job::start_ssh(int n, const std::string& pmi_address) {
    EnvVars vars = o_.env_all ? all_variables(environ) : forwarded_variables(o_, environ);
    for (auto& kv : job_variables(o_, plan_)) vars.push_back(kv);
    vars.emplace_back("MPC_NODE_ID", std::to_string(n));
    for (auto& kv : pmi_.tcp_environment(pmi_address, n)) vars.push_back(kv);
    char cwd[4096];
    const std::string directory = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
    const char* ssh = getenv("MPC_SSH");
    std::string error;
    // The secret goes to the remote shell's standard input (never a command
    // line): its first line, read into the variable before the program starts.
    LaunchResult r = launch_node(ssh_command(ssh && *ssh ? ssh : "ssh", plan_.host_of(n), directory,
                                             vars, o_.program, runtime::auth::kSecretVariable),
                                 {}, -1, true, &error);
    if (!add_child(r, n, n, error)) return false;
    const std::string line =
        runtime::auth::to_hex(secret_.bytes.data(), secret_.bytes.size()) + "\n";
    if (n == 0) {
        stdin_buf_.insert(0, line);  // before mpcrun's own standard input
    } else {
        // An empty pipe takes the line at once; then the node process's
        // standard input ends, as /dev/null's would.
        ssize_t ignored = write(r.stdin_fd, line.data(), line.size());
        (void)ignored;
        close(r.stdin_fd);
    }
    return true;
}

bool Job::start_srun(const std::string& pmi_address) {
    // srun gives every task mpcrun's environment: a PMI channel of a launcher
    // above mpcrun must not reach them (they would take its rank or socket).
    for (const char* name : {"PMI_FD", "PMI_RANK", "PMI_ID", "PMI_SIZE", "PMI_PORT"})
        unsetenv(name);
    EnvVars vars = job_variables(o_, plan_);
    for (auto& kv : pmi_.tcp_environment(pmi_address, -1)) vars.push_back(kv);
    // srun's environment (not its command line) reaches every task: Slurm
    // carries it in its launch request, which munge signs but does not encrypt.
    vars.emplace_back(runtime::auth::kSecretVariable,
                      runtime::auth::to_hex(secret_.bytes.data(), secret_.bytes.size()));
    const char* srun = getenv("MPC_SRUN");
    std::string error;
    LaunchResult r = launch_node(srun_command(srun && *srun ? srun : "srun", plan_, o_.program),
                                 vars, -1, true, &error);
    return add_child(r, 0, plan_.node_procs - 1, error);
}

bool Job::add_child(const LaunchResult& r, int first_node, int last_node,
                    const std::string& error) {
    if (r.pid < 0) {
        const std::string what = first_node == last_node
                                     ? "node process " + std::to_string(first_node)
                                     : "the node processes (srun)";
        write_out(STDERR_FILENO, "mpcrun: cannot start " + what + ": " + error + "\n");
        return false;
    }
    Child c;
    c.pid = r.pid;
    c.first_node = first_node;
    c.last_node = last_node;
    c.out.fd = r.stdout_fd;
    c.out.target = STDOUT_FILENO;
    c.err.fd = r.stderr_fd;
    c.err.target = STDERR_FILENO;
    if (first_node == 0) stdin_pipe_ = r.stdin_fd;
    children_.push_back(std::move(c));
    ++alive_;
    return true;
}

void Job::loop() {
    std::vector<pollfd> fds;
    std::vector<std::pair<Watch, int>> what;
    while (!done()) {
        fds.clear();
        what.clear();
        auto watch = [&](int fd, short events, Watch w, int node) {
            fds.push_back({fd, events, 0});
            what.emplace_back(w, node);
        };
        // PMI before the signal pipe: an abort sent just before dying must be
        // known before the death is.
        for (int n = 0; n < pmi_.size(); ++n)
            if (pmi_.fd(n) >= 0) watch(pmi_.fd(n), pmi_.poll_events(n), Watch::kPmi, n);
        for (int slot = 0; slot < pmi_.pending_slots(); ++slot)
            if (pmi_.pending_fd(slot) >= 0)
                watch(pmi_.pending_fd(slot), pmi_.pending_poll_events(slot), Watch::kPending, slot);
        if (pmi_.listen_fd() >= 0) watch(pmi_.listen_fd(), POLLIN, Watch::kListen, 0);
        for (size_t c = 0; c < children_.size(); ++c) {
            const Child& child = children_[c];
            if (child.out.fd >= 0) watch(child.out.fd, POLLIN, Watch::kOut, static_cast<int>(c));
            if (child.err.fd >= 0) watch(child.err.fd, POLLIN, Watch::kErr, static_cast<int>(c));
        }
        if (stdin_open_ && stdin_pipe_ >= 0 && stdin_buf_.size() < kStdinBuffer)
            watch(STDIN_FILENO, POLLIN, Watch::kStdin, 0);
        if (stdin_pipe_ >= 0 && !stdin_buf_.empty())
            watch(stdin_pipe_, POLLOUT, Watch::kStdinPipe, 0);
        watch(g_signal_pipe[0], POLLIN, Watch::kSignal, 0);

        auto next =
            std::min({kill_at_, ending_ ? Clock::time_point::max() : timeout_at_, drain_until_,
                      ending_ ? Clock::time_point::max() : lost_at_, pmi_.next_deadline()});
        int timeout_ms = -1;
        if (next != Clock::time_point::max()) {
            auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
            timeout_ms = static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
        }
        int ready = poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "mpcrun: poll failed: %s\n", strerror(errno));
            end_job(1, "");
            signal_all(SIGKILL);
            return;
        }
        for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            const int index = what[i].second;
            switch (what[i].first) {
                case Watch::kPmi:
                    pmi_.handle(index, fds[i].revents);
                    break;
                case Watch::kListen:
                    pmi_.accept_connections();
                    break;
                case Watch::kPending:
                    pmi_.handle_pending(index, fds[i].revents);
                    break;
                case Watch::kOut:
                    read_output(children_[static_cast<size_t>(index)].out);
                    break;
                case Watch::kErr:
                    read_output(children_[static_cast<size_t>(index)].err);
                    break;
                case Watch::kStdin:
                    read_stdin();
                    break;
                case Watch::kStdinPipe:
                    write_stdin();
                    break;
                case Watch::kSignal:
                    on_signals();
                    break;
            }
        }
        pmi_.expire(Clock::now());
        handle_pmi_events();

        auto now = Clock::now();
        if (!ending_ && now >= timeout_at_) {
            char text[128];
            snprintf(text, sizeof(text),
                     "mpcrun: the job exceeded its time limit of %g s; ending it", o_.timeout);
            end_job(124, text);
        }
        if (!ending_ && now >= lost_at_) end_job(1, lost_message_);
        if (now >= kill_at_) {
            signal_all(SIGKILL);
            // Node processes on other hosts do not die with their ssh or srun:
            // they end when their PMI connection closes.
            if (plan_.mode != LaunchMode::kLocal) pmi_.close_all();
            kill_at_ = Clock::time_point::max();
        }
        if (now >= drain_until_) {  // something kept a pipe open after the last exit
            for (Child& child : children_)
                for (OutputStream* s : {&child.out, &child.err})
                    if (s->fd >= 0) {
                        write_out(s->target, s->lines.finish());
                        close(s->fd);
                        s->fd = -1;
                    }
        }
    }
}

bool Job::done() const {
    if (alive_ > 0) return false;
    for (const Child& child : children_)
        if (child.out.fd >= 0 || child.err.fd >= 0) return false;
    return true;
}

void Job::on_signals() {
    unsigned char sigs[64];
    ssize_t n;
    while ((n = read(g_signal_pipe[0], sigs, sizeof(sigs))) > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            int sig = sigs[i];
            if (sig == SIGCHLD) continue;
            if (ending_) {  // asked twice: no more grace
                signal_all(SIGKILL);
                continue;
            }
            char text[128];
            snprintf(text, sizeof(text), "mpcrun: received signal %d (%s); ending the job", sig,
                     strsignal(sig));
            end_job(128 + sig, text, sig == SIGINT ? SIGINT : SIGTERM);
        }
    }
    reap();
}

void Job::reap() {
    for (;;) {
        siginfo_t info{};
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
        const pid_t pid = info.si_pid;
        // Still a zombie, it keeps its process group id from being reused:
        // end whatever it left running in its group.
        kill(-pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        auto it = std::find_if(children_.begin(), children_.end(),
                               [&](const Child& c) { return c.pid == pid && !c.exited; });
        if (it == children_.end()) continue;
        it->exited = true;
        --alive_;
        if (it->first_node == 0 && stdin_pipe_ >= 0) {
            close(stdin_pipe_);
            stdin_pipe_ = -1;
            stdin_buf_.clear();
        }
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        for (int n = it->first_node; n <= it->last_node; ++n)
            pmi_.client_exited(n, ending_ || code != 0);
        handle_pmi_events();  // an abort it sent before dying explains the death
        // A node process that fails after another one vanished (its PMI
        // connection closed early) most likely failed because of it: a fence
        // it could not finish. The vanished one's own status, which its ssh
        // reports a moment later, is the one to give (or lost_at_'s message).
        const bool after_loss = lost_client_ >= 0 &&
                                (lost_client_ < it->first_node || lost_client_ > it->last_node);
        if (code != 0 && !ending_ && !after_loss) {
            char text[160];
            if (WIFSIGNALED(status))
                snprintf(text, sizeof(text), " was killed by signal %d (%s); ending the job",
                         WTERMSIG(status), strsignal(WTERMSIG(status)));
            else
                snprintf(text, sizeof(text), " exited with status %d; ending the job", code);
            end_job(code, "mpcrun: " + describe_child(*it) + text);
        }
        // Everyone is gone and the vanished one gave no failure of its own.
        if (alive_ == 0 && !ending_ && lost_client_ >= 0) end_job(1, lost_message_);
        if (alive_ == 0) drain_until_ = Clock::now() + kDrainGrace;
    }
}

void Job::handle_pmi_events() {
    for (const Pmi2Server::Event& e : pmi_.take_events()) {
        if (e.kind == Pmi2Server::Event::Kind::kRefused) {  // the job goes on
            write_out(STDERR_FILENO, "mpcrun: " + e.message + "\n");
            continue;
        }
        if (ending_) continue;
        if (e.kind == Pmi2Server::Event::Kind::kLost) {
            // Its ssh or srun ends too, most likely, with the status to report.
            if (lost_at_ == Clock::time_point::max()) {
                lost_at_ = Clock::now() + kLostGrace;
                lost_client_ = e.client;
                lost_message_ = "mpcrun: " + describe(e.client) + " " + e.message +
                                " (did it die?); ending the job";
            }
        } else if (e.kind == Pmi2Server::Event::Kind::kAbort) {
            int status = e.status & 0xff;
            end_job(status ? status : 1, "mpcrun: " + describe(e.client) +
                                             " aborted the job (status " +
                                             std::to_string(e.status) + "): " + e.message);
        } else {
            end_job(1, "mpcrun: " + describe(e.client) + ": " + e.message + "; ending the job");
        }
    }
}

void Job::end_job(int status, const std::string& message, int sig) {
    if (ending_) return;
    ending_ = true;
    exit_status_ = status;
    if (!message.empty()) write_out(STDERR_FILENO, message + "\n");
    signal_all(sig);
    kill_at_ = Clock::now() + kKillGrace;
}

void Job::signal_all(int sig) {
    // srun takes one SIGINT as a request for status: it ends its tasks on SIGTERM.
    if (plan_.mode == LaunchMode::kSlurm && sig == SIGINT) sig = SIGTERM;
    for (const Child& c : children_)
        if (c.pid > 0 && !c.exited) kill(-c.pid, sig);
}

std::string Job::describe(int n) const {
    std::string text = "node process " + std::to_string(n) + " (" + plan_.ranks_of(n);
    if (plan_.mode == LaunchMode::kSsh) text += ", host " + plan_.host_of(n);
    for (const Child& c : children_)
        if (c.first_node == n && c.last_node == n) text += ", pid " + std::to_string(c.pid);
    return text + ")";
}

std::string Job::describe_child(const Child& c) const {
    if (c.first_node == c.last_node) return describe(c.first_node);
    return "srun (node processes " + std::to_string(c.first_node) + "-" +
           std::to_string(c.last_node) + ", pid " + std::to_string(c.pid) + ")";
}

void Job::read_output(OutputStream& s) {
    char buf[65536];
    ssize_t n = read(s.fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) {
        write_out(s.target, s.lines.feed(buf, static_cast<size_t>(n)));
        return;
    }
    write_out(s.target, s.lines.finish());  // end of stream
    close(s.fd);
    s.fd = -1;
}

void Job::read_stdin() {
    char buf[16384];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n > 0) {
        stdin_buf_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        stdin_open_ = false;  // end of input, or a terminal we may not read
    }
    if (!stdin_open_ && stdin_buf_.empty() && stdin_pipe_ >= 0) {
        close(stdin_pipe_);
        stdin_pipe_ = -1;
    }
}

void Job::write_stdin() {
    ssize_t n = write(stdin_pipe_, stdin_buf_.data(), stdin_buf_.size());
    if (n > 0) {
        stdin_buf_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {  // node process 0 closed its stdin
        stdin_buf_.clear();
        stdin_open_ = false;
    }
    if (!stdin_open_ && stdin_buf_.empty()) {
        close(stdin_pipe_);
        stdin_pipe_ = -1;
    }
}

// Whole lines in one write each batch; a closed target drops the output.
void Job::write_out(int target, const std::string& text) {
    size_t done = 0;
    while (done < text.size() && !target_broken_[target]) {
        ssize_t n = write(target, text.data() + done, text.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
        } else if (n < 0 && errno == EAGAIN) {
            pollfd p{target, POLLOUT, 0};
            poll(&p, 1, 100);
        } else if (n < 0 && errno != EINTR) {
            target_broken_[target] = true;
        }
    }
}

}  // namespace

int run_job(const Options& options, const JobPlan& plan) {
    // Standard descriptors closed at start would be reused by our pipes.
    for (int fd = 0; fd <= 2; ++fd)
        if (fcntl(fd, F_GETFD) < 0) open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    Job job(options, plan);
    return job.run();
}

}  // namespace mpc::launcher
