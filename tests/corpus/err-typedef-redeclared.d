/* A typedef name given another type: dt_node_decl's words. */
typedef int new_int;
typedef char new_int;

BEGIN
{
	exit(0);
}
