// Per-rank results of the name service (users, groups, hosts, services,
// protocols, networks) and hsearch's table (see libc_state.hpp). The lookups
// run through their reentrant forms into the rank's buffers, grown as glibc
// grows its own; the enumerations (getpwent, getgrent, gethostent, ...)
// return into the rank's buffers too, but their position is libc's, one per
// process. Local rank 0 keeps libc's buffers and table.
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <search.h>
#include <sys/socket.h>

#include <cerrno>

#include "libc_state.hpp"

namespace mpc::host {
namespace {

// call(buffer, size, &result) with a reentrant lookup; the buffer grows while
// it returns ERANGE. The lookup leaves errno as the plain function does.
template <class Result, class Call>
Result* lookup(GrowBuffer& buf, Call call) {
    if (!buf.data && !buf.grow()) return nullptr;
    for (;;) {
        Result* result = nullptr;
        if (call(buf.data, buf.size, &result) != ERANGE) return result;
        if (!buf.grow()) {
            errno = ERANGE;
            return nullptr;
        }
    }
}

// The same for the host and network lookups, which report through h_errno:
// the buffer grows while the call says ERANGE with h_errno NETDB_INTERNAL.
template <class Result = hostent, class Call>
Result* lookup_host(GrowBuffer& buf, Call call) {
    if (!buf.data && !buf.grow()) return nullptr;
    for (;;) {
        Result* result = nullptr;
        int error = 0;
        const int rc = call(buf.data, buf.size, &result, &error);
        if (rc != ERANGE || error != NETDB_INTERNAL || !buf.grow()) {
            if (error != 0) h_errno = error;
            return result;
        }
    }
}

}  // namespace
}  // namespace mpc::host

using mpc::host::larger;
using mpc::host::private_libc;
using mpc::host::RankLibc;

extern "C" {

// ---- Users and groups -----------------------------------------------------------

__attribute__((visibility("default"))) struct passwd* getpwnam(const char* name) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getpwnam)(name);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<passwd>(l.passwd_buffer, [&](char* b, size_t n, passwd** out) {
        return getpwnam_r(name, &l.passwd, b, n, out);
    });
}

__attribute__((visibility("default"))) struct passwd* getpwuid(uid_t uid) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getpwuid)(uid);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<passwd>(l.passwd_buffer, [&](char* b, size_t n, passwd** out) {
        return getpwuid_r(uid, &l.passwd, b, n, out);
    });
}

__attribute__((visibility("default"))) struct passwd* getpwent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getpwent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<passwd>(l.passwd_buffer, [&](char* b, size_t n, passwd** out) {
        return getpwent_r(&l.passwd, b, n, out);
    });
}

__attribute__((visibility("default"))) struct group* getgrnam(const char* name) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getgrnam)(name);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<group>(l.group_buffer, [&](char* b, size_t n, group** out) {
        return getgrnam_r(name, &l.group, b, n, out);
    });
}

__attribute__((visibility("default"))) struct group* getgrgid(gid_t gid) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getgrgid)(gid);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<group>(l.group_buffer, [&](char* b, size_t n, group** out) {
        return getgrgid_r(gid, &l.group, b, n, out);
    });
}

__attribute__((visibility("default"))) struct group* getgrent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getgrent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<group>(l.group_buffer, [&](char* b, size_t n, group** out) {
        return getgrent_r(&l.group, b, n, out);
    });
}

// ---- Hosts, services, protocols ---------------------------------------------------

__attribute__((visibility("default"))) struct hostent* gethostbyname(const char* name) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(gethostbyname)(name);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host(l.host_buffer, [&](char* b, size_t n, hostent** out, int* e) {
        return gethostbyname_r(name, &l.host, b, n, out, e);
    });
}

__attribute__((visibility("default"))) struct hostent* gethostbyname2(const char* name, int af) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(gethostbyname2)(name, af);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host(l.host_buffer, [&](char* b, size_t n, hostent** out, int* e) {
        return gethostbyname2_r(name, af, &l.host, b, n, out, e);
    });
}

__attribute__((visibility("default"))) struct hostent* gethostbyaddr(const void* addr,
                                                                     socklen_t len, int type) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(gethostbyaddr)(addr, len, type);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host(l.host_buffer, [&](char* b, size_t n, hostent** out, int* e) {
        return gethostbyaddr_r(addr, len, type, &l.host, b, n, out, e);
    });
}

__attribute__((visibility("default"))) struct servent* getservbyname(const char* name,
                                                                     const char* proto) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getservbyname)(name, proto);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<servent>(l.service_buffer, [&](char* b, size_t n, servent** out) {
        return getservbyname_r(name, proto, &l.service, b, n, out);
    });
}

__attribute__((visibility("default"))) struct servent* getservbyport(int port, const char* proto) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getservbyport)(port, proto);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<servent>(l.service_buffer, [&](char* b, size_t n, servent** out) {
        return getservbyport_r(port, proto, &l.service, b, n, out);
    });
}

__attribute__((visibility("default"))) struct protoent* getprotobyname(const char* name) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getprotobyname)(name);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<protoent>(l.protocol_buffer, [&](char* b, size_t n, protoent** out) {
        return getprotobyname_r(name, &l.protocol, b, n, out);
    });
}

__attribute__((visibility("default"))) struct protoent* getprotobynumber(int proto) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getprotobynumber)(proto);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<protoent>(l.protocol_buffer, [&](char* b, size_t n, protoent** out) {
        return getprotobynumber_r(proto, &l.protocol, b, n, out);
    });
}

__attribute__((visibility("default"))) struct netent* getnetbyname(const char* name) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getnetbyname)(name);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host<netent>(l.network_buffer,
                                          [&](char* b, size_t n, netent** out, int* e) {
                                              return getnetbyname_r(name, &l.network, b, n, out, e);
                                          });
}

__attribute__((visibility("default"))) struct netent* getnetbyaddr(uint32_t net, int type) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getnetbyaddr)(net, type);
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host<netent>(
        l.network_buffer, [&](char* b, size_t n, netent** out, int* e) {
            return getnetbyaddr_r(net, type, &l.network, b, n, out, e);
        });
}

// ---- Enumerations: the rank's buffers, libc's position (one per process) ------------

__attribute__((visibility("default"))) struct hostent* gethostent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(gethostent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host(l.host_buffer, [&](char* b, size_t n, hostent** out, int* e) {
        return gethostent_r(&l.host, b, n, out, e);
    });
}

__attribute__((visibility("default"))) struct netent* getnetent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getnetent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup_host<netent>(l.network_buffer,
                                          [&](char* b, size_t n, netent** out, int* e) {
                                              return getnetent_r(&l.network, b, n, out, e);
                                          });
}

__attribute__((visibility("default"))) struct servent* getservent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getservent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<servent>(l.service_buffer, [&](char* b, size_t n, servent** out) {
        return getservent_r(&l.service, b, n, out);
    });
}

__attribute__((visibility("default"))) struct protoent* getprotoent() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getprotoent)();
    RankLibc::Larger& l = larger(*r);
    return mpc::host::lookup<protoent>(l.protocol_buffer, [&](char* b, size_t n, protoent** out) {
        return getprotoent_r(&l.protocol, b, n, out);
    });
}

// ---- hsearch: one table per rank ---------------------------------------------------

__attribute__((visibility("default"))) int hcreate(size_t nel) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(hcreate)(nel);
    return hcreate_r(nel, &larger(*r).table);
}

__attribute__((visibility("default"))) ENTRY* hsearch(ENTRY item, ACTION action) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(hsearch)(item, action);
    ENTRY* found = nullptr;
    (void)hsearch_r(item, action, &found, &larger(*r).table);
    return found;
}

__attribute__((visibility("default"))) void hdestroy() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(hdestroy)();
    hdestroy_r(&larger(*r).table);
}

}  // extern "C"
