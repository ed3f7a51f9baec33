#!/usr/sbin/dtrace -qs
/* The control lines dt_pragma accepts without -C: a null directive, an
 * interpreter line, #ident, and line controls (which renumber the lines
 * that follow, as the error below shows). */
#
#ident "control-lines"
#line 100

BEGIN
{
	trace(sizeof (void));
}
