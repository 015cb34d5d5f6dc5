/* Test-only mutants: builds of the guard with one mechanism removed, so
 * that `make conformance-mutants` can show the matrix catches each one.
 * Only mk/conformance.mk defines EG_MUTANT_* and it always defines
 * EG_TEST_MUTANT_BUILD with them; a production build that somehow got one
 * of them stops here. */
#ifndef EG_MUTANT_H
#define EG_MUTANT_H

#if (defined(EG_MUTANT_NO_CLASSIFY) || defined(EG_MUTANT_NO_RECHECK) || \
    defined(EG_MUTANT_LENIENT_SNI)) && \
    !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if defined(EG_MUTANT_RANGE_FIRST) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if defined(EG_MUTANT_TRUST_DIALLED) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if (defined(EG_MUTANT_EARLY_BODY) || defined(EG_MUTANT_NO_POLICY_ACK)) && \
    !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if defined(EG_MUTANT_NO_HANDOFF) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if defined(EG_MUTANT_SOCKS_NO_CLASSIFY) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if (defined(EG_MUTANT_NFT_FORWARD) || defined(EG_MUTANT_TENANT_BY_SOURCE)) && \
    !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif
#if defined(EG_MUTANT_NO_ANTISPOOF) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for make conformance-mutants only"
#endif

#ifdef EG_TEST_MUTANT_BUILD
#define EG_MUTANT_TAG "-MUTANT"
#else
#define EG_MUTANT_TAG ""
#endif

#endif
