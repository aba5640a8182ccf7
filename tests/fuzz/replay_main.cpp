// A main() for the fuzz targets when they are not built with libFuzzer: runs
// LLVMFuzzerTestOneInput on every file named on the command line (or in the
// directories named), so that saved crashers and corpora replay as ordinary
// tests under any compiler and sanitizer.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return 1;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int failures = 0, inputs = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        struct stat st {};
        if (stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR* d = opendir(arg.c_str());
            while (d) {
                dirent* e = readdir(d);
                if (!e) break;
                if (e->d_name[0] == '.') continue;
                failures += run_file(arg + "/" + e->d_name);
                ++inputs;
            }
            if (d) closedir(d);
        } else {
            failures += run_file(arg);
            ++inputs;
        }
    }
    printf("replay: %d inputs\n", inputs);
    return failures ? 1 : 0;
}
