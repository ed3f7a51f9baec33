/*
 * With pspec, what could be a declaration or a probe description is a
 * description (options/err.pspec-on): here one without a body.
 */
#pragma D option pspec

int*x
