/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_API_H
#define RSP_API_H

/*
 * librsp is built with -fvisibility=hidden; what the shared object exports
 * is marked RSP_API (and listed by lib/librsp.map). Everything else stays
 * inside the library.
 */
#ifndef RSP_API
#define RSP_API __attribute__((visibility("default")))
#endif

#endif /* RSP_API_H */
