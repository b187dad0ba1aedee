// Built against a host-only install: the oracles' host side (plain C++)
// judges a round's counts, and the program writes a trace, as
// gfsl/record.cuh would, for the installed gfsl check. argv[1]: the trace.
#include <gfsl/oracles_host.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  namespace o = gfsl::oracles;
  o::config c;
  c.oracle = o::kind::owned_keys;
  c.tiles = 2;
  c.per_tile = 1;
  c.insert = o::insert_kind::multiset;
  const std::vector<unsigned> ins{2, 1}, era{1, 1}, found{o::looked_up_present, o::looked_up_absent};
  o::summary s;
  o::account_round(c, o::span_of(c), ins.data(), era.data(), found.data(), s);
  if (!s.clean()) return 1;
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f) return 2;
  std::fputs("{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"cuda\",\"clock\":\"device_counter\",\"delete_value\":true,"
             "\"recorder\":\"gfsl/record.cuh\",\"model\":\"multiset\"}\n"
             "{\"team\":0,\"op\":\"insert\",\"key\":5,\"value\":1,\"ok\":true,\"call\":1,\"ret\":2}\n"
             "{\"team\":1,\"op\":\"insert\",\"key\":5,\"value\":1,\"ok\":true,\"call\":3,\"ret\":4}\n"
             "{\"team\":0,\"op\":\"count\",\"key\":5,\"value\":2,\"ok\":true,\"call\":5,\"ret\":6}\n",
             f);
  return std::fclose(f) == 0 ? 0 : 2;
}
