// Ready-made C++ for PTX's memory instructions, for a user's shadow of a
// header of inline PTX (docs/CUDA-ON-CPU.md, "Inline PTX"). Each function is
// the instruction its name spells, run on the layer:
//   ld<sem, scope>(p)            ld.{weak,volatile,relaxed,acquire}.{cta,gpu,sys}
//   st<sem, scope>(p, v)         st.{weak,volatile,relaxed,release}
//   atom_<op><sem, scope>(p, v)  atom.{relaxed,acquire,release,acq_rel}.{add,exch,and,or,xor,min,max,inc,dec}
//   atom_cas<sem, scope>(p, compare, v)
//   red_<op><sem, scope>(p, v)   red.*: atom_* without the result
//   fence<sem, scope>()          fence.{sc,acq_rel}; membar.* is fence<sem::sc>
//   globaltimer()                mov.u64 %0, %globaltimer
// and ld_sc / st_sc for libcu++'s seq_cst mapping (fence.sc; ld.acquire or
// st.release, PTX having no .sc load or store).
// How they run: every one is a scheduling point and passes the memory model
// (options::memory) with its semantics. .weak and .volatile are taken as
// .relaxed: a weak load that another warp's store races with may return an
// older store under ptx, as the model's relaxed loads do; what a weak access
// can do beyond that (tearing, the compiler's reordering) is not modelled.
// Scopes are one scope, the GPU's (.cta and .sys as .gpu), and
// fence.acq_rel is fence.sc (stronger: it hides behaviours, never adds one).
#pragma once

#include "cuda.hpp"

namespace gfsl::cpu::ptx {

enum class sem : std::uint8_t { weak, volatile_, relaxed, acquire, release, acq_rel, sc };
enum class scope : std::uint8_t { cta, gpu, sys };

namespace detail {
constexpr ::gfsl::cpu::detail::order load_order(sem s) {
  using ::gfsl::cpu::detail::order;
  return s == sem::acquire ? order::acquire : s == sem::sc ? order::seq_cst : order::relaxed;
}
constexpr ::gfsl::cpu::detail::order store_order(sem s) {
  using ::gfsl::cpu::detail::order;
  return s == sem::release ? order::release : s == sem::sc ? order::seq_cst : order::relaxed;
}
constexpr ::gfsl::cpu::detail::order rmw_order(sem s) {
  using ::gfsl::cpu::detail::order;
  switch (s) {
    case sem::acquire: return order::acquire;
    case sem::release: return order::release;
    case sem::acq_rel: return order::acq_rel;
    case sem::sc: return order::seq_cst;
    default: return order::relaxed;
  }
}
template <class T>
constexpr void check_type() {
  static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8),
                "gfsl::cpu::ptx: an access of 1, 2, 4 or 8 bytes (.b8 .. .b64)");
}
}  // namespace detail

template <sem S = sem::weak, scope Sc = scope::gpu, class T>
T ld(const T* p, GFSL_CPU_HERE) {
  detail::check_type<T>();
  static_assert(S != sem::release && S != sem::acq_rel, "gfsl::cpu::ptx: ld has no .release or .acq_rel");
  ::gfsl::cpu::detail::at(where);
  return ::gfsl::cpu::detail::from_bits<T>(::gfsl::cpu::detail::atomic_load(p, sizeof(T), detail::load_order(S)));
}
template <sem S = sem::weak, scope Sc = scope::gpu, class T>
void st(T* p, T v, GFSL_CPU_HERE) {
  detail::check_type<T>();
  static_assert(S != sem::acquire && S != sem::acq_rel, "gfsl::cpu::ptx: st has no .acquire or .acq_rel");
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::atomic_store(p, sizeof(T), ::gfsl::cpu::detail::to_bits(v), detail::store_order(S));
}
template <class T>
T ld_sc(const T* p, GFSL_CPU_HERE) {
  return ld<sem::sc>(p, where);
}
template <class T>
void st_sc(T* p, T v, GFSL_CPU_HERE) {
  st<sem::sc>(p, v, where);
}

#define GFSL_CPU_PTX_ATOM(op, expr)                                                                        \
  template <sem S = sem::relaxed, scope Sc = scope::gpu, class T>                                          \
  T atom_##op(T* p, T v, GFSL_CPU_HERE) {                                                                  \
    detail::check_type<T>();                                                                               \
    ::gfsl::cpu::detail::at(where);                                                                        \
    return ::gfsl::cpu::detail::rmw_ordered(p, [v](T old) -> T { (void)old; return expr; }, detail::rmw_order(S)); \
  }                                                                                                        \
  template <sem S = sem::relaxed, scope Sc = scope::gpu, class T>                                          \
  void red_##op(T* p, T v, GFSL_CPU_HERE) {                                                                \
    (void)atom_##op<S, Sc>(p, v, where);                                                                   \
  }
GFSL_CPU_PTX_ATOM(add, static_cast<T>(old + v))
GFSL_CPU_PTX_ATOM(exch, v)
GFSL_CPU_PTX_ATOM(and, static_cast<T>(old & v))
GFSL_CPU_PTX_ATOM(or, static_cast<T>(old | v))
GFSL_CPU_PTX_ATOM(xor, static_cast<T>(old ^ v))
GFSL_CPU_PTX_ATOM(min, old < v ? old : v)
GFSL_CPU_PTX_ATOM(max, old > v ? old : v)
GFSL_CPU_PTX_ATOM(inc, static_cast<T>(old >= v ? 0 : old + 1))
GFSL_CPU_PTX_ATOM(dec, static_cast<T>((old == 0 || old > v) ? v : old - 1))
#undef GFSL_CPU_PTX_ATOM

template <sem S = sem::relaxed, scope Sc = scope::gpu, class T>
T atom_cas(T* p, T compare, T v, GFSL_CPU_HERE) {
  detail::check_type<T>();
  ::gfsl::cpu::detail::at(where);
  return ::gfsl::cpu::detail::rmw_ordered(p, [v](T) -> T { return v; }, detail::rmw_order(S), true, compare);
}

template <sem S = sem::sc, scope Sc = scope::gpu>
void fence(GFSL_CPU_HERE) {
  static_assert(S == sem::sc || S == sem::acq_rel, "gfsl::cpu::ptx: fence is .sc or .acq_rel");
  ::gfsl::cpu::detail::at(where);
  ::gfsl::cpu::detail::fence_ordered(S == sem::sc ? ::gfsl::cpu::detail::order::seq_cst : ::gfsl::cpu::detail::order::acq_rel);
}

inline unsigned long long globaltimer(GFSL_CPU_HERE) { return __globaltimer(where); }

}  // namespace gfsl::cpu::ptx
