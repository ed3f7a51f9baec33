/*
 * cwd and root name the current process's working and root directories
 * (dtrace's own in BEGIN: the corpus runs it from the repository, whose
 * path is not fixed, so only its shape is checked); Linux has no zones,
 * so zonename is "global"; pset is -1 (no processor sets).
 */
BEGIN
{
	printf("%d %s %s %d %d\n", substr(cwd, 0, 1) == "/", root, zonename, pset, chip >= 0 && lgrp >= 0);
	exit(0);
}
