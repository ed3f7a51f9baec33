/* typedef is a declaration of the program's outer level, not a statement. */
BEGIN
{
	typedef int new_int;
	exit(0);
}
