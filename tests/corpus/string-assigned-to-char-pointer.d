/* A string assigned to a char pointer points at its characters: strings and char pointers are compatible (dt_node_is_strcompat). */
char *s;

BEGIN
{
	s = probeprov;
	this->p = "xyz";
	printf("%c%c %s %c\n", s[0], s[1], stringof(s), this->p[2]);
	exit(0);
}
