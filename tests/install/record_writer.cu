// Writes the trace of a hand-made history through the installed header's host
// side (no GPU needed): argv[2] "good" is linearizable under --model
// upsert-map, "stale" is not (a find sees a value an upsert replaced before
// the find was called).
#include <gfsl/record.cuh>

#include <string>

using gfsl::record::entry;
using gfsl::record::op;

static entry make(unsigned who, op o, unsigned key, unsigned arg, bool ok, unsigned value, unsigned char known,
                  unsigned long long call, unsigned long long ret) {
  entry e{};
  e.who = who, e.kind = static_cast<unsigned char>(o), e.key = key, e.arg = arg, e.ok = ok, e.value = value, e.known = known;
  e.call = call, e.ret = ret;
  return e;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const bool stale = std::string(argv[2]) == "stale";
  std::vector<entry> h = {make(0, op::insert, 5, 7, true, 0, 1, 1, 2),   make(1, op::find, 5, 0, true, 7, 3, 3, 4),
                          make(0, op::upsert, 5, 8, false, 0, 1, 5, 6),  make(1, op::find, 5, 0, true, stale ? 7 : 8, 3, 7, 8),
                          make(2, op::upsert, 6, 1, false, 0, 0, 9, 12), make(3, op::erase, 5, 0, true, 0, 1, 10, gfsl::record::never)};
  gfsl::record::device_log::write_json_lines_of(h, argv[1]);
  return 0;
}
