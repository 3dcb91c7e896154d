// SPDX-License-Identifier: GPL-2.0
/*
 * The files rspctl report embeds in its page, taken into rspctl's read-only
 * data as they are (the assembler's .incbin: no conversion step, no copy
 * in the sources). d3 and d3-flame-graph come from the npm registry at
 * build time (scripts/report-assets.sh); page.js and page.css are ours
 * (cli/report/). Each ends in a NUL so it can be used as a C string.
 */
#include <stddef.h>
#include "report.h"
#include "report_libs.h" /* generated: RSP_REPORT_LIBS_MISSING */

#define EMBED(sym, file)                                                                           \
	__asm__(".section .rodata\n"                                                               \
		".global " #sym "\n"                                                               \
		".type " #sym ", @object\n"                                                        \
		".balign 16\n" #sym ":\n"                                                          \
		".incbin \"" file "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".previous\n")

EMBED(report_d3_js, RSP_REPORT_ASSETS "/d3.min.js");
EMBED(report_flamegraph_js, RSP_REPORT_ASSETS "/d3-flamegraph.min.js");
EMBED(report_flamegraph_css, RSP_REPORT_ASSETS "/d3-flamegraph.css");
EMBED(report_page_js, RSP_REPORT_PAGE "/page.js");
EMBED(report_page_css, RSP_REPORT_PAGE "/page.css");

const char *const report_libs_missing = RSP_REPORT_LIBS_MISSING;
