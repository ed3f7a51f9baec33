typedef unsigned char byte_t;
typedef struct point { int x; int y; } point_t;
typedef point_t *point_ptr_t;

BEGIN
{
	b = (byte_t)257;
	printf("%d %d %d %d\n", b, sizeof (byte_t), sizeof (point_t), sizeof (point_ptr_t));
	exit(0);
}
