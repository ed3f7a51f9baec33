/* dt_node_inline's D_OP_INCOMPAT: the value cannot become the inline's type. */
inline int i = "i am a string";

BEGIN
{
	exit(0);
}
