#include "userlib_cxx.hpp"

std::string cxx_name = std::string("lib") + "name";

namespace {

int constructions = 0;

struct Registry {
    std::vector<int> items{1, 2, 3};
    Registry() { ++constructions; }
};

Registry registry;

}  // namespace

void cxx_library_add(int value) {
    registry.items.push_back(value);
    cxx_inline_counter += value;
    CxxCounter<int>::value += value;
}

CxxLibraryView cxx_library_view() {
    return {&cxx_inline_counter, &CxxCounter<int>::value, &cxx_name, constructions, registry.items};
}
